import { waitFor } from '@opkit/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigMap, Namespace, Secret, type ObjectOf } from '../client/kind.js';
import type { Cached } from '../client/types.js';
import { controllerReference } from '../helpers/owner.js';
import type { Manager } from '../manager/manager.js';
import { testManager } from '../testing/harness.js';
import { useControlPlane } from '../testing/control-plane-suite.js';
import { Priority } from '../queue/work-queue.js';
import { controllerFor } from './builder.js';
import { finishing, type EventPriority } from './event-priority.js';
import type { Trigger } from './provenance.js';

// When reconciles run, seen from what a user cares about: an edit is not stuck behind a start's
// replay, state nobody announces is reconciled again, a burst of writes costs one reconcile, and one
// object cannot take more than its share.
describe('priorities, resync, debounce and per-object limits against a real API server', () => {
  const suite = useControlPlane();
  let manager: Manager | undefined;
  let n = 0;
  afterEach(async () => {
    await manager?.stop();
    manager = undefined;
  });
  const freshNamespace = async () => {
    const name = `p${++n}`;
    await suite.admin.create(Namespace, { metadata: { name } });
    return name;
  };
  /**
   * A controller of ConfigMaps owning Secrets at `priority`, each reconcile 20 ms (200 new objects
   * queue 4 s of work), started with one ConfigMap `job` reconciled; `order` is what ran, in order.
   */
  const startJobs = async (priority: EventPriority<Cached<ObjectOf<typeof Secret>>>) => {
    const ns = await freshNamespace();
    const order: string[] = [];
    const t = testManager(suite.plane.kubeConfig, { namespaces: [ns] });
    manager = t.manager;
    manager.add(
      controllerFor(ConfigMap)
        .owns(Secret, { priority })
        .reconcile(async (req) => {
          order.push(req.name);
          await new Promise((r) => setTimeout(r, 20));
        }),
    );
    await manager.start();
    const job = await suite.admin.create(ConfigMap, { metadata: { name: 'job', namespace: ns } });
    await waitFor('the job started', () => order.includes('job'));
    const queueNew = async (from: number) => {
      for (let i = from; i < from + 200; i += 50)
        await Promise.all(Array.from({ length: 50 }, (_, j) => suite.admin.create(ConfigMap, { metadata: { name: `new-${i + j}`, namespace: ns } })));
    };
    return { ns, order, owner: [controllerReference(ConfigMap, job)], queueNew };
  };

  it("reconciles a user's edit made during a start before the 300 objects the start replays", async () => {
    const ns = await freshNamespace();
    for (let i = 0; i < 300; i += 50)
      await Promise.all(Array.from({ length: 50 }, (_, j) => suite.admin.create(ConfigMap, { metadata: { name: `old-${i + j}`, namespace: ns } })));
    const order: string[] = [];
    const t = testManager(suite.plane.kubeConfig, { namespaces: [ns] });
    manager = t.manager;
    manager.add(
      controllerFor(ConfigMap).reconcile(async (req) => {
        order.push(req.name);
        await new Promise((r) => setTimeout(r, 10)); // 300 × 10 ms: the replay takes 3 s
      }),
    );
    await manager.start();
    await suite.admin.create(ConfigMap, { metadata: { name: 'edit', namespace: ns } });
    await waitFor('the edit reconciled', () => order.includes('edit'), { timeoutMs: 30_000 });
    const before = order.indexOf('edit');
    // First-in-first-out it would come 301st, after every replayed object.
    expect(before).toBeLessThan(150);
    await waitFor('the replay finished', () => order.length === 301, { timeoutMs: 30_000 });
  });

  it('finishes work in flight before new work: an owned object reporting back (owns at Priority.high) runs its owner ahead of 200 new objects queued before', async () => {
    const { ns, order, owner, queueNew } = await startJobs(Priority.high);
    await queueNew(0);
    // The job's result arrives after all of them.
    await suite.admin.create(Secret, { metadata: { name: 'result', namespace: ns, ownerReferences: owner } });
    await waitFor('the job finished', () => order.lastIndexOf('job') > 0, { timeoutMs: 30_000 });
    const newDone = order.slice(0, order.lastIndexOf('job')).filter((n) => n.startsWith('new-')).length;
    // First-in-first-out it would run after all 200.
    expect(newDone).toBeLessThan(100);
    await waitFor('the new work done', () => order.filter((n) => n.startsWith('new-')).length === 200, { timeoutMs: 30_000 });
  });

  it('finishes on the report that work is done (finishing): a progress report waits its turn, the report of the end runs the owner ahead of 200 new objects', async () => {
    const { ns, order, owner, queueNew } = await startJobs(finishing((s) => s.metadata.labels?.phase === 'Done'));
    const newBefore = (index: number, from = 0) => order.slice(0, index).filter((n) => n.startsWith('new-') && Number(n.slice(4)) >= from).length;

    // A progress report after 200 new objects: it waits behind them (at high priority it would not).
    await queueNew(0);
    await suite.admin.create(Secret, { metadata: { name: 'result', namespace: ns, labels: { phase: 'Running' }, ownerReferences: owner } });
    await waitFor('the progress report reconciled', () => order.indexOf('job', 1) > 0, { timeoutMs: 30_000 });
    expect(newBefore(order.indexOf('job', 1))).toBeGreaterThanOrEqual(195);

    // The report of the end, after 200 more: the owner runs ahead of those still queued.
    await queueNew(200);
    const reported = order.length;
    const stillQueued = 200 - newBefore(reported, 200);
    await suite.admin.patch(Secret, { namespace: ns, name: 'result' }, { metadata: { labels: { phase: 'Done' } } }, 'merge');
    await waitFor('the job finished', () => order.lastIndexOf('job') > order.indexOf('job', 1), { timeoutMs: 30_000 });
    expect(stillQueued).toBeGreaterThan(40); // else first in first out would pass too
    expect(newBefore(order.lastIndexOf('job'), 200) - newBefore(reported, 200)).toBeLessThan(20);
    await waitFor('the new work done', () => order.filter((n) => n.startsWith('new-')).length === 400, { timeoutMs: 60_000 });
  });

  it('reconciles every object again each resync period, past the predicates, and not when resync is off', async () => {
    const ns = await freshNamespace();
    await suite.admin.create(ConfigMap, { metadata: { name: 'a', namespace: ns } });
    const runs = (period: number) => {
      const seen: Trigger['source'][][] = [];
      const t = testManager(suite.plane.kubeConfig, { namespaces: [ns] });
      t.manager.add(
        controllerFor(ConfigMap, { predicates: [{ update: () => false }] })
          .withOptions({ resyncPeriodMs: period })
          .reconcile((_, ctx) => {
            seen.push(ctx.triggers.map((tr) => tr.source));
          }),
      );
      return { manager: t.manager, seen };
    };
    const on = runs(1_000);
    manager = on.manager;
    await manager.start();
    await waitFor('two resyncs', () => on.seen.filter((s) => s.includes('resync')).length >= 2, { timeoutMs: 10_000 });
    expect(on.seen[0]).toEqual(['watch']); // the start's replay
    await manager.stop();

    const off = runs(0);
    manager = off.manager;
    await manager.start();
    await new Promise((r) => setTimeout(r, 3_000));
    expect(off.seen).toEqual([['watch']]);
  });

  it('merges a burst of 20 writes to one object into one reconcile when debounced', async () => {
    const ns = await freshNamespace();
    await suite.admin.create(ConfigMap, { metadata: { name: 'bursty', namespace: ns } });
    const runs: string[] = [];
    const t = testManager(suite.plane.kubeConfig, { namespaces: [ns] });
    manager = t.manager;
    manager.add(
      controllerFor(ConfigMap)
        .withOptions({ debounceMs: 400 })
        .reconcile(async (req, ctx) => {
          runs.push((await ctx.cache.get(ConfigMap, req))?.data?.n ?? '-');
        }),
    );
    await manager.start();
    await waitFor('the start', () => runs.length === 1);
    for (let i = 1; i <= 20; i++) await suite.admin.patch(ConfigMap, { namespace: ns, name: 'bursty' }, { data: { n: String(i) } });
    await waitFor('the burst reconciled', () => runs.at(-1) === '20', { timeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 800));
    // Without the debounce each write is a reconcile (merged only while one is running).
    expect(runs).toEqual(['-', '20']);
  });

  it('runs an object that requeues itself at once no more than its per-object limit allows, and others meanwhile', async () => {
    const ns = await freshNamespace();
    await suite.admin.create(ConfigMap, { metadata: { name: 'loop', namespace: ns } });
    const runs: Record<string, number> = {};
    const t = testManager(suite.plane.kubeConfig, { namespaces: [ns] });
    manager = t.manager;
    manager.add(
      controllerFor(ConfigMap)
        .withOptions({ perObjectRateLimit: { reconciles: 2, perMs: 1_000 } })
        .reconcile((req) => {
          runs[req.name] = (runs[req.name] ?? 0) + 1;
          return req.name === 'loop' ? { requeueAfter: 1 } : undefined;
        }),
    );
    await manager.start();
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, 500));
    await suite.admin.create(ConfigMap, { metadata: { name: 'other', namespace: ns } });
    await waitFor('the other object', () => runs.other === 1);
    await new Promise((r) => setTimeout(r, 2_500 - (performance.now() - t0)));
    // 2 per second over ~2.5 s: 6 at most (a 1 ms requeue would otherwise run hundreds of times).
    expect(runs.loop).toBeGreaterThanOrEqual(4);
    expect(runs.loop).toBeLessThanOrEqual(6);
  });

  it('with skipOwnWriteEvents, a write costs no second reconcile, while changes by others still reconcile', async () => {
    const ns = await freshNamespace();
    const counts = async (skipOwnWriteEvents: boolean, name: string) => {
      await suite.admin.create(ConfigMap, { metadata: { name, namespace: ns }, data: { v: '1' } });
      let runs = 0;
      const t = testManager(suite.plane.kubeConfig, { namespaces: [ns], name: `own-${name}` });
      t.manager.add(
        controllerFor(ConfigMap, { predicates: [{ create: (o) => o.metadata.name === name, update: (_, o) => o.metadata.name === name }] })
          .owns(Secret)
          .withOptions({ skipOwnWriteEvents })
          .reconcile(async (req, ctx) => {
            if (req.name !== name) return;
            runs++;
            const cm = await ctx.cache.get(ConfigMap, req);
            if (!cm) return;
            const secret = await ctx.cache.get(Secret, { namespace: ns, name: `${name}-s` });
            await ctx.apply(
              Secret,
              { metadata: { name: `${name}-s`, namespace: ns, ownerReferences: [controllerReference(ConfigMap, cm)] }, stringData: { v: cm.data!.v! } },
              secret,
            );
          }),
      );
      manager = t.manager;
      await t.manager.start();
      await waitFor('the Secret written', async () => !!(await suite.admin.find(Secret, { namespace: ns, name: `${name}-s` })));
      await new Promise((r) => setTimeout(r, 1_000));
      const afterCreate = runs;
      // Someone else changes the child: that reconciles, and the repair is written back.
      await suite.admin.patch(Secret, { namespace: ns, name: `${name}-s` }, { stringData: { v: 'tampered' } });
      await waitFor(
        'the Secret repaired',
        async () => (await suite.admin.get(Secret, { namespace: ns, name: `${name}-s` })).data?.v === Buffer.from('1').toString('base64'),
      );
      await new Promise((r) => setTimeout(r, 1_000));
      await t.manager.stop();
      manager = undefined;
      return { afterCreate, afterTamper: runs - afterCreate };
    };
    expect(await counts(false, 'plain')).toEqual({ afterCreate: 2, afterTamper: 2 });
    expect(await counts(true, 'skipping')).toEqual({ afterCreate: 1, afterTamper: 1 });
  });
});
