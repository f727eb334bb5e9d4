// Keys per second through the work queue and N workers with a no-op reconciler: the ceiling the
// queue itself puts on a controller.
import { WorkQueue } from '@opkit/runtime';
import { table } from '../report.js';

async function run(keys: number, workers: number, addsPerKey: number) {
  const q = new WorkQueue('bench', { metrics: { add() {}, depth() {}, retry() {}, queued() {}, worked() {} } });
  let processed = 0;
  const t0 = performance.now();
  for (let r = 0; r < addsPerKey; r++) for (let i = 0; i < keys; i++) q.add(`ns/key-${i}`);
  const loops = Array.from({ length: workers }, async () => {
    for (;;) {
      const k = await q.get();
      if (k === undefined) return;
      processed++;
      await Promise.resolve(); // a no-op reconcile still yields once
      q.done(k);
      if (q.length === 0 && q.inFlight === 0) q.shutDown();
    }
  });
  await Promise.all(loops);
  const seconds = (performance.now() - t0) / 1000;
  return { keys, 'adds per key': addsPerKey, workers, reconciles: processed, 'keys/s': Math.round(processed / seconds), seconds };
}

async function main() {
  const rows = [];
  for (const [keys, workers, adds] of [
    [100_000, 1, 1],
    [100_000, 4, 1],
    [100_000, 4, 5],
    [1_000, 1, 100],
  ] as const)
    rows.push(await run(keys, workers, adds));
  table(rows);
  console.log('adds of a key already queued are merged, so "reconciles" counts distinct pending keys');
}
void main();
