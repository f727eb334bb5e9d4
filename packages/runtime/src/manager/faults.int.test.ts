import { maxWritesPerObjectPerMinute, operatorWrites, startFaultProxy, waitFor, writesByNonLeaders, type FaultProxy } from '@opkit/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigMap, Namespace } from '../client/kind.js';
import { controllerFor } from '../controller/builder.js';
import { useControlPlane } from '../testing/control-plane-suite.js';
import { testManager } from '../testing/harness.js';
import type { Manager } from './manager.js';

const TERMS = { leaseDurationMs: 4_000, renewDeadlineMs: 3_000, retryPeriodMs: 500 };
const SEEDS = [1, 2];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Two replicas of an operator, each behind its own fault-injecting proxy (delays, hangs, resets,
 * throttling, 5xx, 410, too-large resourceVersions, writes applied but failed, watches cut), while
 * objects change. Once the faults stop, every change is reconciled within a bound; while they
 * last, writes stay bounded and only the replica the Lease names writes (the audit log tells).
 */
describe('two replicas behind a fault-injecting proxy', () => {
  const suite = useControlPlane({ audit: true });
  const managers: Manager[] = [];
  const proxies: FaultProxy[] = [];
  afterAll(async () => {
    await Promise.all(managers.map((m) => m.stop()));
    await Promise.all(proxies.map((p) => p.stop()));
  });

  for (const seed of SEEDS) {
    it(`converges once the faults stop, writes boundedly, and never writes from two replicas (seed ${seed})`, async () => {
      const ns = `faults-${seed}`;
      const since = new Date();
      await suite.admin.create(Namespace, { metadata: { name: ns } });
      const want = new Map<string, string>();
      for (let r = 0; r < 2; r++) {
        const proxy = await startFaultProxy({ upstream: suite.plane.kubeConfig, seed: seed * 10 + r });
        proxies.push(proxy);
        const { manager } = testManager(proxy.kubeConfig(), { name: 'faulty', namespaces: [ns], leaderElection: { name: 'faulty', namespace: ns, ...TERMS } });
        managers.push(manager);
        // Marks each ConfigMap with the value it last saw: one write per change.
        manager.add(
          controllerFor(ConfigMap).reconcile(async (req, ctx) => {
            const cm = await ctx.cache.get(ConfigMap, req);
            if (!cm) return;
            const v = cm.data?.v ?? '';
            if (cm.metadata.annotations?.seen === v) return;
            await ctx.patch(ConfigMap, req, { metadata: { annotations: { seen: v } } });
          }),
        );
        await manager.start();
      }
      // Changes while the faults go on: 12 objects, each changed every few seconds, for 30 s.
      const until = performance.now() + 30_000;
      for (let i = 0; performance.now() < until; i++) {
        const name = `cm-${i % 12}`;
        const v = String(i);
        want.set(name, v);
        await suite.admin.apply(ConfigMap, { metadata: { name, namespace: ns }, data: { v } }).catch(() => want.delete(name));
        await sleep(250);
      }
      for (const p of proxies.slice(-2)) p.faults(false);
      const stoppedAt = performance.now();
      await waitFor('every change reconciled', async () => {
        const items = (await suite.admin.list(ConfigMap, { namespace: ns })).items.filter((c) => c.metadata.name?.startsWith('cm-'));
        return items.length === want.size && items.every((c) => c.metadata.annotations?.seen === c.data?.v);
      }, { timeoutMs: 60_000, intervalMs: 250 });
      const convergedMs = Math.round(performance.now() - stoppedAt);
      const writes = operatorWrites(suite.plane.audit!, 'faulty/', since);
      const burst = maxWritesPerObjectPerMinute(writes);
      const split = writesByNonLeaders(suite.plane.audit!, { userAgent: 'faulty/', lease: { namespace: ns, name: 'faulty' }, since });
      const injected = proxies.slice(-2).map((p) => p.stats);
      console.log(`seed ${seed}: ${injected.map((s) => `${s.injected}/${s.requests} faults (${Object.entries(s.byKind).map(([k, n]) => `${k} ${n}`).join(', ')})`).join('; ')}; converged ${convergedMs} ms after; ${writes.length} writes, at most ${burst.writes} a minute to one object`);
      expect(split).toEqual([]);
      // 30 s of changes every 3 s per object: ~10 changes a minute, each one patch; faults may double it.
      expect(burst.writes).toBeLessThanOrEqual(40);
      expect(injected.every((s) => s.injected > 0)).toBe(true);
      await Promise.all(managers.splice(-2).map((m) => m.stop()));
    });
  }
});
