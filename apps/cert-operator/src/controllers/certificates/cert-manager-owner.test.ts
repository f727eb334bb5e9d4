import { WorkQueue, type ReconcileContext } from '@opkit/runtime';
import { FakeClock } from '@opkit/runtime/testing';
import { describe, expect, it } from 'vitest';
import type { CertificateObject } from '../../api/v1/certificate.js';
import type { SecretObject } from '../../secrets/secret-reader.js';
import { CertManagerOwners, LOOK_AGAIN_MS } from './cert-manager-owner.js';

const certificate = { metadata: { namespace: 'apps', name: 'web' }, spec: { secretName: 'web-tls' } } as CertificateObject;
const secret = (resourceVersion: string) =>
  ({ metadata: { namespace: 'apps', name: 'web-tls', resourceVersion, annotations: { 'cert-manager.io/certificate-name': 'web-tls' } } }) as SecretObject;

/** A cluster with cert-manager's Certificate "web-tls" until `deleteTheirs()`, counting the GETs. */
function cluster(clock: FakeClock) {
  let theirs = true;
  let gets = 0;
  const ctx = {
    clock,
    client: {
      find: async () => {
        gets++;
        return theirs ? { metadata: { name: 'web-tls' }, spec: { secretName: 'web-tls' } } : undefined;
      },
    },
  } as unknown as Pick<ReconcileContext, 'client' | 'clock'>;
  return { ctx, deleteTheirs: () => (theirs = false), gets: () => gets };
}

describe('CertManagerOwners: which cert-manager Certificate holds a Secret, asked once a minute per version of it', () => {
  it('remembers the answer for one version of the Secret, and says when it expires', async () => {
    const clock = new FakeClock();
    const { ctx, gets } = cluster(clock);
    const owners = new CertManagerOwners();
    expect(await owners.holder(certificate, secret('1'), ctx)).toEqual({ name: 'web-tls', lookAgainInMs: LOOK_AGAIN_MS });
    clock.advance(20_000);
    expect(await owners.holder(certificate, secret('1'), ctx)).toEqual({ name: 'web-tls', lookAgainInMs: LOOK_AGAIN_MS - 20_000 });
    expect(gets()).toBe(1);
    expect(await owners.holder(certificate, secret('2'), ctx)).toEqual({ name: 'web-tls', lookAgainInMs: LOOK_AGAIN_MS });
    expect(gets()).toBe(2);
  });

  it('a Secret without the annotation, or one naming a Certificate for another Secret, has no holder and costs no GET or one', async () => {
    const clock = new FakeClock();
    const { ctx, gets } = cluster(clock);
    const owners = new CertManagerOwners();
    expect(await owners.holder(certificate, { metadata: { name: 'web-tls', resourceVersion: '1' } } as SecretObject, ctx)).toBeUndefined();
    expect(await owners.holder(certificate, undefined, ctx)).toBeUndefined();
    expect(gets()).toBe(0);
    expect(await owners.holder({ ...certificate, spec: { ...certificate.spec, secretName: 'other' } }, secret('1'), ctx)).toBeUndefined();
    expect(gets()).toBe(1);
  });

  // The seam with the work queue: it keeps the earlier of two delays asked for one item. A refusal
  // at 0 s asks for 60 s; a Secret written at 5 s refuses again, remembered until 65 s. When the
  // 60 s requeue comes, the answer still stands for 5 s: waiting a fixed minute more made the
  // documented "within a minute" take up to two.
  it('with the work queue: a refused Certificate sees cert-manager Certificate deleted within a minute of the deletion, whatever the Secret did before', async () => {
    const clock = new FakeClock();
    const { ctx, deleteTheirs } = cluster(clock);
    const owners = new CertManagerOwners();
    const queue = new WorkQueue('certificates', { clock });
    const reconciles: { at: number; refused: boolean }[] = [];
    const reconcile = async (rv: string) => {
      const held = await owners.holder(certificate, secret(rv), ctx);
      reconciles.push({ at: clock.monotonic(), refused: held !== undefined });
      if (held) queue.addAfter('apps/web', held.lookAgainInMs);
    };
    const runDue = async () => {
      while (queue.length > 0) {
        const item = await queue.get();
        await reconcile('2');
        queue.done(item!);
      }
    };

    await reconcile('1');
    clock.advance(5_000);
    await reconcile('2'); // cert-manager wrote the Secret once more
    clock.advance(25_000);
    deleteTheirs();
    const deletedAt = clock.monotonic();
    for (let s = 0; s < 120 && reconciles.at(-1)!.refused; s++) {
      clock.advance(1_000);
      await runDue();
    }
    const taken = reconciles.at(-1)!;
    expect(taken.refused).toBe(false);
    expect(taken.at - deletedAt).toBeLessThanOrEqual(LOOK_AGAIN_MS);
  });
});
