import { startControlPlane, waitFor, type ControlPlane } from '@opkit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../client/client.js';
import { Lease, Namespace, Pod } from '../client/kind.js';
import { Transport, type RequestSpec } from '../client/transport.js';
import { captureLogger } from '../testing/log-capture.js';
import { holdings, ring } from './assignment.js';
import { memberLeaseName, ShardMember } from './member.js';
import { EMPTY, intersect, isEmpty, union, WHOLE, type RangeSet } from './ranges.js';

/*
 * Replicas of one ring against a real API server: what each is told it may reconcile is its
 * "working" set, and after every change no two working sets meet. Short Lease timings (6 s lease,
 * 4 s renew deadline, 0.3 s retry); drains take a while, as in-flight reconciles do.
 */
const timing = { leaseDurationMs: 6_000, renewDeadlineMs: 4_000, retryPeriodMs: 300 };

/** A replica's connection to the API server, which a SIGKILL ends: nothing it sends from then on arrives. */
class KillableTransport extends Transport {
  killed = false;
  /** A slow connection: each request waits this long before it is sent. */
  delayMs = 0;
  override async request<T>(spec: RequestSpec): Promise<T> {
    if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
    if (this.killed) throw new Error('the process was killed');
    return super.request<T>(spec);
  }
}

describe('a shard ring of replicas against a real API server', () => {
  let plane: ControlPlane;
  let client: Client;
  const working = new Map<string, RangeSet>();
  const overlaps: string[] = [];
  const replicas = new Map<string, { abort: AbortController; done: Promise<void>; member: ShardMember; transport: KillableTransport }>();

  const check = () => {
    const entries = [...working];
    for (const [i, [a, x]] of entries.entries()) for (const [b, y] of entries.slice(i + 1)) if (!isEmpty(intersect(x, y))) overlaps.push(`${a} and ${b}`);
  };
  const start = (identity: string, waitForLeaderLease?: string, pod?: { name: string; uid: string }) => {
    // Each replica its own connection, as separate processes have.
    const transport = new KillableTransport(plane.kubeConfig);
    const c = new Client(transport, { fieldManager: identity });
    const member = new ShardMember(
      c,
      { ring: 'memcached-operator', namespace: 'operators', identity, timing, waitForLeaderLease, pod },
      captureLogger().logger,
    );
    const abort = new AbortController();
    working.set(identity, EMPTY);
    const done = member.run(abort.signal, {
      onActive: (ranges) => {
        // A killed process does no work, whatever its code would still say.
        if (!replicas.has(identity)) return;
        working.set(identity, ranges);
        check();
      },
      drain: () => new Promise<void>((r) => setTimeout(r, 400)),
    });
    replicas.set(identity, { abort, done, member, transport });
  };
  /** SIGKILL: the process and all its work are gone at once; its Leases stay until they expire. */
  const killed: { abort: AbortController; done: Promise<void> }[] = [];
  const kill = (identity: string) => {
    const r = replicas.get(identity)!;
    r.transport.killed = true;
    replicas.delete(identity);
    killed.push(r);
    working.delete(identity);
  };
  const converged = (members: string[]) => () => {
    const want = ring(members);
    return (
      members.every((m) => {
        const w = working.get(m) ?? EMPTY;
        return (
          JSON.stringify(w, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) ===
          JSON.stringify(holdings(want, m).active, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))
        );
      }) || undefined
    );
  };
  const memberLease = (identity: string) => ({ namespace: 'operators', name: memberLeaseName('memcached-operator', identity) });
  const covered = () => [...working.values()].reduce<RangeSet>((u, w) => union(u, w), EMPTY);

  beforeAll(async () => {
    plane = await startControlPlane();
    client = new Client(new Transport(plane.kubeConfig), { fieldManager: 'test-admin' });
    await client.create(Namespace, { metadata: { name: 'operators' } });
    // As the chart makes them (so that `helm uninstall` removes them): empty, written by the ring.
    for (const name of ['memcached-operator-coordinator', 'memcached-operator-shards'])
      await client.create(Lease, { metadata: { name, namespace: 'operators' }, spec: {} });
  });
  afterAll(async () => {
    for (const r of [...replicas.values(), ...killed]) r.abort.abort();
    await Promise.all([...replicas.values(), ...killed].map((r) => r.done.catch(() => undefined)));
    await plane?.stop();
  });

  it('splits the hash space between two replicas, then three, handing parts over only once drained', async () => {
    start('r-a');
    start('r-b');
    await waitFor('two replicas to split the space as the ring says', converged(['r-a', 'r-b']), { timeoutMs: 20_000 });
    expect(covered()).toEqual(WHOLE);
    start('r-c');
    await waitFor('a third replica to get its share', converged(['r-a', 'r-b', 'r-c']), { timeoutMs: 20_000 });
    expect(covered()).toEqual(WHOLE);
    expect(overlaps).toEqual([]);
  });

  it("gives a killed replica's parts to the others once its Lease has expired, never before", async () => {
    const killedAt = Date.now();
    kill('r-b');
    // Until its Lease expires (6 s) its parts are reconciled by nobody: that is the price of never two.
    await waitFor('the others to cover the space again', converged(['r-a', 'r-c']), { timeoutMs: 20_000 });
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(timing.leaseDurationMs - timing.retryPeriodMs);
    expect(covered()).toEqual(WHOLE);
    expect(overlaps).toEqual([]);
    // Its expired Lease is litter: the coordinator deletes it.
    await waitFor("the killed replica's Lease removed", async () => !(await client.find(Lease, memberLease('r-b'))) || undefined, { timeoutMs: 10_000 });
  });

  it('takes a replica that leaves gracefully out at once (it gives its parts up, then deletes its Lease), and one that comes back in, even when the one leaving coordinated', async () => {
    // The coordinator leaves: the one left takes over with no history of the killed r-b's Lease,
    // which it sees held for all it can tell; it must not hand r-b the leaver's parts.
    const coordinator = (await client.get(Lease, { namespace: 'operators', name: 'memcached-operator-coordinator' })).spec?.holderIdentity;
    expect(['r-a', 'r-c']).toContain(coordinator);
    const leaving = coordinator!;
    const staying = leaving === 'r-a' ? 'r-c' : 'r-a';
    const r = replicas.get(leaving)!;
    const leftAt = Date.now();
    r.abort.abort();
    await r.done;
    replicas.delete(leaving);
    working.delete(leaving);
    // It left nothing behind: its Lease is gone (deleted, not released).
    expect(await client.find(Lease, memberLease(leaving))).toBeUndefined();
    await waitFor('the one left to own the whole space', converged([staying]), { timeoutMs: 20_000 });
    // Within a few retry periods (0.1–0.7 s here under two CPU burners), not the lease duration
    // (6 s) that r-b's Lease takes to expire in the new coordinator's eyes.
    expect(Date.now() - leftAt).toBeLessThan(timing.leaseDurationMs / 2);
    start(leaving);
    await waitFor('the returning replica to get its share back', converged(['r-a', 'r-c']), { timeoutMs: 20_000 });
    expect(overlaps).toEqual([]);
  });

  it('joins only once a leader-elected replica of the operator is gone (a rollout from leader election to sharding)', async () => {
    // The old leader renews its Lease as leader election does.
    const renew = async (holder: string | undefined) => {
      const lease = await client.get(Lease, { namespace: 'operators', name: 'memcached-operator-leader' });
      const now = new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
      await client.update(Lease, { ...lease, spec: { holderIdentity: holder, leaseDurationSeconds: 6, renewTime: now, acquireTime: now } });
    };
    await client.create(Lease, { metadata: { name: 'memcached-operator-leader', namespace: 'operators' }, spec: {} });
    await renew('old-leader');
    const renewing = setInterval(() => void renew('old-leader').catch(() => undefined), 1_000);
    try {
      start('r-new', 'memcached-operator-leader');
      await new Promise((r) => setTimeout(r, 3_000));
      expect(working.get('r-new')).toEqual(EMPTY);
      expect(await client.find(Lease, memberLease('r-new'))).toBeUndefined();
    } finally {
      clearInterval(renewing);
    }
    // The old leader stops and releases its Lease, as a graceful shutdown does (after its last renewal landed).
    await waitFor(
      'the release to land',
      () =>
        renew(undefined).then(
          () => true,
          () => undefined,
        ),
      { timeoutMs: 5_000 },
    );
    await waitFor('the new replica to join', converged(['r-a', 'r-c', 'r-new']), { timeoutMs: 20_000 });
    expect(overlaps).toEqual([]);
  });

  it("makes a replica's Lease owned by its pod; a replica whose Lease is deleted under it (its pod force-deleted) stops at once and stays out", async () => {
    const pod = await client.create(Pod, {
      metadata: { name: 'memcached-operator-7d9f-x2', namespace: 'operators' },
      spec: { containers: [{ name: 'operator', image: 'opkit/memcached-operator:dev' }] },
    });
    start('r-p', undefined, { name: pod.metadata.name!, uid: pod.metadata.uid! });
    await waitFor('r-p to join', converged(['r-a', 'r-c', 'r-new', 'r-p']), { timeoutMs: 20_000 });
    const lease = memberLease('r-p');
    expect((await client.get(Lease, lease)).metadata.ownerReferences).toEqual([
      { apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid: pod.metadata.uid },
    ]);
    // Its connection is slow (each request 1 s late: a renewal, a read and a write, still lands
    // within its 4 s renew deadline, so it keeps its Lease until it finds it gone): it learns that
    // its Lease is gone a second or two after the coordinator does. Found by CI: the coordinator
    // gave its parts away at once, to r-c, while it still worked.
    replicas.get('r-p')!.transport.delayMs = 1_000;
    // What the garbage collector does once the pod object is gone.
    await client.delete(Lease, lease);
    const deletedAt = Date.now();
    await waitFor('r-p to stop all work', () => isEmpty(working.get('r-p') ?? EMPTY) || undefined, { timeoutMs: 10_000 });
    replicas.get('r-p')!.transport.delayMs = 0;
    const member = replicas.get('r-p')!.member;
    await waitFor('r-p to leave the ring for good', () => member.removed, { timeoutMs: 5_000 });
    await waitFor('the others to cover the space', converged(['r-a', 'r-c', 'r-new']), { timeoutMs: 20_000 });
    // Its parts waited a lease duration from when the coordinator found its Lease gone.
    expect(Date.now() - deletedAt).toBeGreaterThanOrEqual(timing.leaseDurationMs);
    // It did not make its Lease again.
    expect(await client.find(Lease, lease)).toBeUndefined();
    expect(overlaps).toEqual([]);
  });
});
