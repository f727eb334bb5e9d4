import { replicaOf, startControlPlane, waitFor, type ControlPlane } from '@opkit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../client/client.js';
import { ConfigMap, Namespace } from '../client/kind.js';
import { Transport } from '../client/transport.js';
import { controllerFor } from '../controller/builder.js';
import type { Manager } from '../manager/manager.js';
import { testManager } from '../testing/harness.js';
import { writesOutsideShards } from '../testing/shard-writes.js';
import { holdings, ring } from './assignment.js';
import { shardHash } from './hash.js';
import { contains } from './ranges.js';

/*
 * Three replicas of one operator, each a manager (ManagerOptions.sharding) with one controller over
 * 60 ConfigMaps, sharded by uid. Every reconcile is recorded as an interval per key and replica: no two replicas'
 * intervals for one key may ever overlap (two writers), through joins, a handover and a SIGKILL;
 * once settled, every key is reconciled by the replica the ring gives it, and only by it. Run
 * twice, with shard selection on the server asked for: on an API server with ShardedListAndWatch
 * each replica's cache holds its share of the ConfigMaps and no more; on one without, the replicas
 * say so and cache every ConfigMap, and the split is the same.
 */
const timing = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 300 };
const NS = 'shop';
const OBJECTS = 60;

describe.each([
  { server: 'with ShardedListAndWatch', gate: true },
  { server: 'without it', gate: false },
])('sharded controllers against a real API server $server', ({ gate }) => {
  let plane: ControlPlane;
  let admin: Client;
  const uids = new Map<string, string>();
  /** Reconciles in flight, by key: which replica. */
  const running = new Map<string, string>();
  const doubles: string[] = [];
  /** The last replica that reconciled each key, and when. */
  const last = new Map<string, { by: string; at: number }>();
  const replicas = new Map<string, Manager>();
  const logs = new Map<string, ReturnType<typeof testManager>['logs']>();
  const dead = new Set<string>();

  const start = async (id: string) => {
    const { manager, logs: captured } = testManager(plane.kubeConfig, {
      // One operator's replicas: one name (user agent `shop-operator/opkit (<identity>)`).
      name: 'shop-operator',
      namespaces: [NS],
      sharding: { ring: 'shop-operator', namespace: NS, timing, selectOnServer: true },
    });
    logs.set(id, captured);
    manager.add(
      controllerFor(ConfigMap)
        .withOptions({ maxConcurrentReconciles: 2 })
        .reconcile(async (req, ctx) => {
          const key = `${req.namespace}/${req.name}`;
          if (dead.has(id)) return;
          const other = running.get(key);
          if (other) doubles.push(`${key}: ${other} and ${id}`);
          running.set(key, id);
          await new Promise((r) => setTimeout(r, 30));
          // A write per round seen, for the audit log to attribute to this replica.
          const cm = await ctx.cache.get(ConfigMap, req);
          const round = cm?.data?.round;
          if (round !== undefined && cm?.metadata.annotations?.['shop/round'] !== round)
            await ctx.patch(ConfigMap, req, { metadata: { annotations: { 'shop/round': round } } }, 'merge');
          if (running.get(key) === id) running.delete(key);
          last.set(key, { by: id, at: Date.now() });
        }),
    );
    await manager.start();
    ids.set(id, manager.identity);
    replicas.set(id, manager);
  };
  /** The identity each replica's manager took (pod name and suffix): what the ring hashes. */
  const ids = new Map<string, string>();
  const ownerOf = (key: string, members: string[]) => {
    const a = ring(members.map((m) => ids.get(m)!));
    return members.find((m) => contains(holdings(a, ids.get(m)!).active, shardHash(uids.get(key)!)));
  };
  /** Changes every ConfigMap, then waits until each was reconciled after the change by the replica the ring names. */
  const touchAll = async (members: string[], round: number) => {
    const since = Date.now();
    await Promise.all([...uids.keys()].map((key) => admin.patch(ConfigMap, { namespace: NS, name: key.split('/')[1]! }, { data: { round: String(round) } })));
    await waitFor(
      `every ConfigMap reconciled by its owner among ${members.join(', ')}`,
      () => [...uids.keys()].every((k) => (last.get(k)?.at ?? 0) >= since && last.get(k)?.by === ownerOf(k, members)) || undefined,
      { timeoutMs: 30_000 },
    );
  };

  /** What each replica's cache holds, against its share (server-side selection) or everything. */
  const cachedAsExpected = (members: string[]) => () =>
    members.every((m) => {
      const cached = replicas
        .get(m)!
        .cache.informer(ConfigMap)
        .list()
        .map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
      const want = gate ? [...uids.keys()].filter((k) => ownerOf(k, members) === m) : [...uids.keys()];
      return cached.length === want.length && want.every((k) => cached.includes(k));
    }) || undefined;

  beforeAll(async () => {
    plane = await startControlPlane({ audit: true, ...(gate ? { apiServerArgs: ['--feature-gates=ShardedListAndWatch=true'] } : {}) });
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'test-admin' });
    await admin.create(Namespace, { metadata: { name: NS } });
    for (let i = 0; i < OBJECTS; i++) {
      const cm = await admin.create(ConfigMap, { metadata: { name: `cm-${i}`, namespace: NS }, data: { round: '0' } });
      uids.set(`${NS}/cm-${i}`, cm.metadata.uid!);
    }
  });
  afterAll(async () => {
    await Promise.all([...replicas.values()].map((m) => m.stop()));
    await plane?.stop();
  });

  it('splits the objects between two replicas, then three, never reconciling one object on two at once', async () => {
    await start('r-a');
    await start('r-b');
    await touchAll(['r-a', 'r-b'], 1);
    await start('r-c');
    await waitFor('the third replica to hold its share', () => (replicas.get('r-c')!.shardMember?.active.length ?? 0) > 0 || undefined, { timeoutMs: 20_000 });
    await touchAll(['r-a', 'r-b', 'r-c'], 2);
    expect(doubles).toEqual([]);
    await waitFor(
      gate ? "each replica's cache to hold its share and no more" : 'each replica to cache every ConfigMap',
      cachedAsExpected(['r-a', 'r-b', 'r-c']),
      {
        timeoutMs: 20_000,
      },
    );
    const warned = [...logs.values()].every((l) => l.find(/does not apply shard selectors/).length > 0);
    expect(warned).toBe(!gate);
  });

  it("reconciles a killed replica's objects on the others once its Lease has expired", async () => {
    const b = replicas.get('r-b')!;
    // SIGKILL: its reconciles stop, and nothing it would still send reaches the API server (no Lease release).
    dead.add('r-b');
    b.transport.request = () => Promise.reject(new Error('the process was killed'));
    b.controllerNamed('configmap')!.halt();
    replicas.delete('r-b');
    await touchAll(['r-a', 'r-c'], 3);
    expect(doubles).toEqual([]);
    await waitFor('the caches to follow the new split', cachedAsExpected(['r-a', 'r-c']), { timeoutMs: 20_000 });
  });

  it('wrote, as the API server saw it, only what the assignment of the moment gave each replica', () => {
    const events = plane.audit!.query();
    const outside = writesOutsideShards(events, {
      userAgent: 'shop-operator/opkit',
      assignment: { namespace: NS, name: 'shop-operator-shards' },
      placeOf: (e) => {
        const uid = e.objectRef?.resource === 'configmaps' ? uids.get(`${e.objectRef.namespace}/${e.objectRef.name}`) : undefined;
        return uid === undefined ? undefined : shardHash(uid);
      },
    });
    expect(outside).toEqual([]);
    // Each replica wrote its share: the check had something to check.
    const writers = new Set(
      events.filter((e) => e.objectRef?.resource === 'configmaps' && e.verb === 'patch' && e.userAgent?.startsWith('shop-operator/')).map(replicaOf),
    );
    expect(writers.size).toBe(3);
  });
});
