import { startPebble, waitFor, type Pebble } from '@opkit/testing';
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptChallenge, readChallenge, type ChallengeRef } from './accept.js';
import { AcmeProblemError, AcmeSession } from './client.js';

/**
 * Against Pebble: asking the CA to validate a challenge twice. The operator records that it asked
 * in a write of its own after the POST; when that write is lost (an API fault), the next pass asks
 * again, and Pebble refuses a second POST once the challenge left pending. Found by the fault proxy
 * (cert scenario, seed 2): the refusal failed the order, and the Certificate waited out an hour's
 * backoff.
 */
describe('acceptChallenge against Pebble', () => {
  let pebble: Pebble;
  let session: AcmeSession;
  beforeAll(async () => {
    pebble = await startPebble();
    const accountKeyPem = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    session = new AcmeSession({ directoryUrl: pebble.directoryUrl, accountKeyPem, caPem: pebble.tlsCaPem });
    await session.call((c) => c.createAccount({ termsOfServiceAgreed: true }));
  });
  afterAll(async () => {
    await pebble?.stop();
  });

  /** A new order's HTTP-01 challenge. Nothing serves it, so Pebble's validation fails: the challenge ends invalid. */
  const newChallenge = async (name: string): Promise<ChallengeRef> => {
    const order = await session.call((c) => c.createOrder({ identifiers: [{ type: 'dns', value: name }] }));
    const [authz] = await session.call((c) => c.getAuthorizations(order));
    const ch = authz!.challenges.find((c) => c.type === 'http-01')! as { url: string; token: string };
    return { url: ch.url, token: ch.token, authorizationURL: authz!.url };
  };

  it('asks once in effect: a second ask after the challenge left pending is not a failure', async () => {
    const ch = await newChallenge('twice.example.test');
    await acceptChallenge(session, ch);
    await waitFor(
      'the challenge validated',
      async () => (await readChallenge(session, ch)).state !== 'pending' && (await readChallenge(session, ch)).state !== 'processing',
    );
    // What the operator sent before: Pebble refuses the repeated POST.
    await expect(session.call((c) => c.completeChallenge({ url: ch.url } as never))).rejects.toThrow(/only status pending/);
    await expect(acceptChallenge(session, ch)).resolves.toBeUndefined();
  });

  it('still fails when the CA refused and the challenge is still pending', async () => {
    const ch = await newChallenge('refused.example.test');
    const err = await acceptChallenge(session, { ...ch, url: `${ch.url}-not-there` }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AcmeProblemError);
    expect((await readChallenge(session, ch)).state).toBe('pending');
  });
});
