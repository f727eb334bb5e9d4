import { bindUnavailable, startBind, type Bind } from '@opkit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DnsError, query } from './client.js';
import { TYPE } from './message.js';
import { challengeRecordName, findZone, txtPropagated } from './resolve.js';
import { cleanupTxt, presentTxt } from './rfc2136.js';
import type { TsigAlgorithm } from './tsig.js';

const skip = bindUnavailable();
const ALG: Record<string, TsigAlgorithm> = { 'hmac-md5': 'HMACMD5', 'hmac-sha1': 'HMACSHA1', 'hmac-sha256': 'HMACSHA256', 'hmac-sha512': 'HMACSHA512' };

describe.skipIf(!!skip)(`RFC 2136 updates and DNS-01 lookups against BIND 9${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let bind: Bind;
  const key = () => ({ name: bind.tsig.name, algorithm: ALG[bind.tsig.algorithm]!, secret: bind.tsig.secret });
  beforeAll(async () => {
    bind = await startBind({ zone: 'example.test' });
  });
  afterAll(() => bind?.stop());

  it('finds the zone of a challenge name, and follows a CNAME when asked', async () => {
    expect(await findZone('_acme-challenge.www.shop.example.test', [bind.server])).toBe('example.test');
    expect(await challengeRecordName('www.example.test', false, [bind.server])).toBe('_acme-challenge.www.example.test');
  });

  it('adds a TXT record with a TSIG-signed update, sees it served, and removes only that value', async () => {
    const p = { nameserver: bind.server, tsig: key() };
    const name = '_acme-challenge.example.test';
    await presentTxt(p, 'example.test', name, 'first-value');
    await presentTxt(p, 'example.test', name, 'second-value');
    // Adding the same record again changes nothing.
    await presentTxt(p, 'example.test', name, 'first-value');
    expect(await txtPropagated(name, 'first-value', [bind.server])).toBeUndefined();
    const served = (await query(bind.server, name, TYPE.TXT)).answers.map((r) => (r.value as string[]).join('')).sort();
    expect(served).toEqual(['first-value', 'second-value']);
    await cleanupTxt(p, 'example.test', name, 'first-value');
    expect(await txtPropagated(name, 'first-value', [bind.server])).toMatch(
      /does not have the TXT record _acme-challenge.example.test "first-value" yet \(it has 1 other\)/,
    );
    expect(await txtPropagated(name, 'second-value', [bind.server])).toBeUndefined();
    await cleanupTxt(p, 'example.test', name, 'second-value');
  });

  it.each(['HMACSHA256', 'HMACSHA512', 'HMACSHA1', 'HMACMD5'] as const)('refuses an update signed with the wrong key (%s), saying so', async (algorithm) => {
    const wrong = { nameserver: bind.server, tsig: { name: bind.tsig.name, algorithm, secret: Buffer.alloc(32, 7).toString('base64') } };
    const err = await presentTxt(wrong, 'example.test', '_acme-challenge.bad.example.test', 'x').catch((e: Error) => e);
    expect(err).toBeInstanceOf(DnsError);
    expect((err as Error).message).toMatch(/refused the update of zone example.test: NOTAUTH \(the TSIG key is not accepted for this zone\)/);
  });

  it('refuses an unsigned update', async () => {
    const err = await presentTxt({ nameserver: bind.server }, 'example.test', '_acme-challenge.x.example.test', 'x').catch((e: Error) => e);
    expect((err as Error).message).toMatch(/REFUSED/);
  });
});
