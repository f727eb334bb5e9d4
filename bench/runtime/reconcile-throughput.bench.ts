// Reconciles per second for 1,000 custom resources against a real API server: a reconciler that
// reads from the cache only, and one that also writes status through the reconcile context (one
// write per object; the key's follow-up reconcile is held in the queue until the cache shows it).
import { createLogger, Client, CustomResourceDefinition, Namespace, Transport, controllerFor } from '@opkit/runtime';
import { testManager } from '@opkit/runtime/testing';
import { startControlPlane, waitFor } from '@opkit/testing';
import { createWriteStream } from 'node:fs';
import { table } from '../report.js';
import { Widget } from './widget.js';

// Logging as the operators do (info, JSON, to a stream), not the tests' debug-level capture.
const operatorLogger = () => createLogger({ name: 'bench', destination: createWriteStream('/dev/null') });

async function main() {
  // Enough that the cache-read-only rows (tens of µs per reconcile) measure more than timer noise.
  const N = 5_000;
  const plane = await startControlPlane({ audit: true });
  try {
    const client = new Client(new Transport(plane.kubeConfig), { fieldManager: 'bench' });
    await client.create(CustomResourceDefinition, Widget.crd as never);
    await client.create(Namespace, { metadata: { name: 'rt' } });
    await waitFor('CRD', () => client.list(Widget.kind, { namespace: 'rt' }).then(() => true));
    for (let i = 0; i < N; i += 50)
      await Promise.all(
        Array.from({ length: 50 }, (_, j) => client.create(Widget.kind, { metadata: { name: `w-${i + j}`, namespace: 'rt' }, spec: { size: 1 } })),
      );

    const rows = [];
    let run = 0;
    for (const [mode, workers] of [
      ['cache read only', 1],
      ['cache read only', 4],
      ['read + status write', 1],
      ['read + status write', 4],
      ['read + status write', 16],
    ] as const) {
      run++;
      const done = new Set<string>();
      let allDone: number | undefined; // when the last object's first reconcile ended (not when a poll saw it)
      const { manager } = testManager(plane.kubeConfig, { name: `bench-${run}`, namespaces: ['rt'], logger: operatorLogger() });
      manager.add(
        controllerFor(Widget.kind)
          .withOptions({ maxConcurrentReconciles: workers })
          .reconcile(async (req, ctx) => {
            const w = await ctx.cache.get(Widget.kind, req);
            if (w && mode === 'read + status write') await ctx.updateStatus(Widget.kind, w, { observedGeneration: w.metadata.generation, run });
            done.add(req.name);
            if (done.size === N) allDone ??= performance.now();
          }),
      );
      const since = new Date();
      const t0 = performance.now();
      await manager.start();
      const synced = performance.now();
      await waitFor('all reconciled', () => done.size === N, { timeoutMs: 300_000, intervalMs: 5 });
      const seconds = (allDone! - synced) / 1000;
      await new Promise((r) => setTimeout(r, 300));
      const writes = plane.audit!.writes({ since }).filter((e) => e.userAgent?.startsWith(`bench-${run}/`)).length;
      rows.push({
        reconciler: mode,
        workers,
        objects: N,
        'cache sync ms': Math.round(synced - t0),
        'reconcile seconds': seconds,
        'reconciles/s': Math.round(N / seconds),
        'writes/object': Math.round((writes / N) * 100) / 100,
      });
      await manager.stop();
    }
    // A resync of converged objects: a fresh manager reconciles everything again and must write nothing.
    const { manager } = testManager(plane.kubeConfig, { name: 'bench-resync', namespaces: ['rt'], logger: operatorLogger() });
    let reconciled = 0;
    manager.add(
      controllerFor(Widget.kind).reconcile(async (req, ctx) => {
        const w = await ctx.cache.get(Widget.kind, req);
        if (w) await ctx.updateStatus(Widget.kind, w, { observedGeneration: w.metadata.generation, run });
        reconciled++;
      }),
    );
    const since = new Date();
    await manager.start();
    await waitFor('resync', () => reconciled === N, { timeoutMs: 120_000 });
    await new Promise((r) => setTimeout(r, 300));
    const resyncWrites = plane.audit!.writes({ since }).filter((e) => e.userAgent?.startsWith('bench-resync/')).length;
    await manager.stop();
    table(rows);
    console.log(`no-op resync of ${N} converged objects: ${resyncWrites} writes`);
  } finally {
    await plane.stop();
  }
}
void main();
