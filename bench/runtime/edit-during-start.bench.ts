// The priority queue's effect (issue 30): how long a user's edit waits when it is made while an
// operator starts over many objects. A fresh manager starts over N converged Widgets (its informer's
// initial list queues all N); as soon as its cache has synced, a new Widget is created, and the
// time from that create to its reconcile starting is measured. With the priority queue (default)
// the replay waits at low priority; without it (`priorityQueue: false`, client-go's plain FIFO) the
// edit waits behind every replayed object. The reconciler reads and writes status (a new value each
// run, so every replayed object costs a write, as after an operator upgrade), one worker
// (the default). Runs interleave, priorities on and off.
//   OPKIT_BENCH_EDIT_OBJECTS=10000   objects replayed at the start
//   OPKIT_BENCH_EDIT_ROUNDS=2
import { createLogger, Client, CustomResourceDefinition, Namespace, Transport, controllerFor } from '@opkit/runtime';
import { testManager } from '@opkit/runtime/testing';
import { startControlPlane, waitFor } from '@opkit/testing';
import { createWriteStream } from 'node:fs';
import { loadavg } from 'node:os';
import { table } from '../report.js';
import { Widget } from './widget.js';
import { median } from '../process-stats.js';

const N = Number(process.env.OPKIT_BENCH_EDIT_OBJECTS ?? 10_000);
const ROUNDS = Number(process.env.OPKIT_BENCH_EDIT_ROUNDS ?? 2);

const operatorLogger = () => createLogger({ name: 'bench', destination: createWriteStream('/dev/null') });

async function main() {
  const plane = await startControlPlane();
  const rows: { queue: string; round: number; 'edit waited ms': number; 'replayed before it': number; 'replay s': number; load: string }[] = [];
  try {
    const client = new Client(new Transport(plane.kubeConfig), { fieldManager: 'bench' });
    await client.create(CustomResourceDefinition, Widget.crd as never);
    await client.create(Namespace, { metadata: { name: 'rt' } });
    await waitFor('CRD', () => client.list(Widget.kind, { namespace: 'rt' }).then(() => true));
    console.log(`creating ${N} Widgets…`);
    for (let i = 0; i < N; i += 50)
      await Promise.all(
        Array.from({ length: 50 }, (_, j) => client.create(Widget.kind, { metadata: { name: `w-${i + j}`, namespace: 'rt' }, spec: { size: 1 } })),
      );
    let run = 0;
    for (let round = 1; round <= ROUNDS; round++) {
      for (const priorityQueue of [true, false]) {
        run++;
        // Each object's first reconcile in this run, in order (a write's own event runs it once more: not counted).
        const order: string[] = [];
        const seen = new Set<string>();
        const edit = `edit-${run}`;
        let editStarted: number | undefined;
        const { manager } = testManager(plane.kubeConfig, { name: `bench-${run}`, namespaces: ['rt'], logger: operatorLogger() });
        manager.add(
          controllerFor(Widget.kind)
            .withOptions({ priorityQueue })
            .reconcile(async (req, ctx) => {
              if (req.name === edit) editStarted ??= performance.now();
              if (!seen.has(req.name)) {
                seen.add(req.name);
                order.push(req.name);
              }
              const w = await ctx.cache.get(Widget.kind, req);
              // A status that differs per run: every replayed object is written, as after an upgrade.
              if (w) await ctx.updateStatus(Widget.kind, w, { observedGeneration: w.metadata.generation, run });
            }),
        );
        const t0 = performance.now();
        await manager.start(); // resolves once the cache has synced and the workers run
        const created = performance.now();
        await client.create(Widget.kind, { metadata: { name: edit, namespace: 'rt' }, spec: { size: 1 } });
        await waitFor('the edit reconciled', () => editStarted !== undefined, { timeoutMs: 30 * 60_000, intervalMs: 5 });
        const before = order.indexOf(edit);
        await waitFor('the replay done', () => order.length >= N + 1, { timeoutMs: 30 * 60_000, intervalMs: 50 });
        rows.push({
          queue: priorityQueue ? 'priority (default)' : 'FIFO',
          round,
          'edit waited ms': Math.round(editStarted! - created),
          'replayed before it': before,
          'replay s': Math.round((performance.now() - t0) / 100) / 10,
          load: loadavg()[0]!.toFixed(2),
        });
        console.log(JSON.stringify(rows[rows.length - 1]));
        await manager.stop();
        await client.delete(Widget.kind, { namespace: 'rt', name: edit });
      }
    }
  } finally {
    await plane.stop();
  }
  table(rows);
  const med = (q: string) => median(rows.filter((r) => r.queue === q).map((r) => r['edit waited ms']));
  console.log(
    `${N} objects replayed, one worker: an edit waited ${med('priority (default)')} ms with priorities, ${med('FIFO')} ms without (median; ratio ${(
      med('priority (default)') / med('FIFO')
    ).toFixed(3)}); load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
}
void main();
