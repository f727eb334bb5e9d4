// How long a full list stops the operator's event loop (issue 30): an informer syncs N ConfigMaps
// from a real API server while the process's other work (another informer, a probe, a reconcile)
// waits for its turn. Its handler does what a controller's does per object (a work-queue add).
// Three ways, runs interleaved:
//   before     paginated LIST, the whole list applied and handed on in one turn (opkit until issue 30)
//   paginated  paginated LIST, handed on 500 objects per turn
//   streamed   streaming list (sendInitialEvents, the default where the API server offers it), 500 per turn
// A start and a relist take the same path (list, replace the store, hand the changes on); the
// start is the worst case, since every object is a change. Reported: the longest stall of the
// event loop (the longest gap between two runs of a 1 ms timer, less the 1 ms), its p99, and the
// time to sync.
//   OPKIT_BENCH_RELIST_OBJECTS=50000
//   OPKIT_BENCH_RELIST_ROUNDS=2
//   OPKIT_BENCH_RELIST_SHAPE=rich     or small
import { Client, ConfigMap, createLogger, Informer, Namespace, Transport, WorkQueue } from '@opkit/runtime';
import { startControlPlane } from '@opkit/testing';
import { createWriteStream } from 'node:fs';
import { loadavg } from 'node:os';
import { table } from '../report.js';

const N = Number(process.env.OPKIT_BENCH_RELIST_OBJECTS ?? 50_000);
const ROUNDS = Number(process.env.OPKIT_BENCH_RELIST_ROUNDS ?? 2);
// small: a name, one label, one key (300 bytes). rich: as many fields as a Pod's spec and status
// hold (10 labels, 2 annotations, 30 data keys), since the cost of applying an object grows with them.
const SHAPE = (process.env.OPKIT_BENCH_RELIST_SHAPE ?? 'rich') as 'small' | 'rich';

function configMap(i: number, shape: 'small' | 'rich') {
  if (shape === 'small') return { metadata: { name: `cm-${i}`, namespace: 'lots', labels: { app: 'bench' } }, data: { v: String(i) } };
  const labels = Object.fromEntries(Array.from({ length: 10 }, (_, k) => [`example.com/label-${k}`, `value-${k}-${i % 7}`]));
  const data = Object.fromEntries(Array.from({ length: 30 }, (_, k) => [`key-${k}`, `value ${k} of object ${i}`]));
  return {
    metadata: { name: `cm-${i}`, namespace: 'lots', labels, annotations: { 'example.com/owner': `team-${i % 13}`, 'example.com/revision': String(i) } },
    data,
  };
}

const MODES = {
  before: { sliceSize: Infinity, timing: { streamingLists: false } },
  paginated: { timing: { streamingLists: false } },
  streamed: {},
} as const;

/** Gaps between runs of a 1 ms timer: how long other work had to wait for its turn. */
function stallMeter() {
  const gaps: number[] = [];
  let last = performance.now();
  let on = true;
  const tick = () => {
    const now = performance.now();
    gaps.push(Math.max(0, now - last - 1));
    last = now;
    if (on) setTimeout(tick, 1);
  };
  setTimeout(tick, 1);
  return {
    stop() {
      on = false;
      const sorted = gaps.sort((a, b) => a - b);
      return { max: sorted[sorted.length - 1] ?? 0, p99: sorted[Math.floor(sorted.length * 0.99)] ?? 0 };
    },
  };
}

async function main() {
  const plane = await startControlPlane();
  const rows: Record<string, string | number>[] = [];
  try {
    const client = new Client(new Transport(plane.kubeConfig), { fieldManager: 'bench' });
    await client.create(Namespace, { metadata: { name: 'lots' } });
    console.log(`creating ${N} ConfigMaps…`);
    const started = Date.now();
    for (let i = 0; i < N; i += 100) {
      await Promise.all(Array.from({ length: Math.min(100, N - i) }, (_, j) => client.create(ConfigMap, configMap(i + j, SHAPE))));
      if ((i + 100) % 10_000 === 0) console.log(`  ${i + 100} created (${Math.round((Date.now() - started) / 1000)} s)`);
    }
    const log = createLogger({ name: 'bench', destination: createWriteStream('/dev/null') });
    for (let round = 1; round <= ROUNDS; round++) {
      for (const [mode, options] of Object.entries(MODES)) {
        const informer = new Informer(new Transport(plane.kubeConfig), ConfigMap, log, { namespace: 'lots', ...options });
        const queue = new WorkQueue('bench');
        informer.addHandler({ onAdd: (o) => queue.add(`${o.metadata.namespace}/${o.metadata.name}`) });
        const meter = stallMeter();
        const t0 = performance.now();
        informer.start();
        await informer.waitForSync();
        const syncMs = performance.now() - t0;
        // The list's last slice ends in the turn that resolves waitForSync: the stall it caused is
        // seen by the meter's next tick, not before.
        await new Promise((r) => setTimeout(r, 20));
        const stalls = meter.stop();
        await informer.stop();
        if (informer.store.size !== N || queue.length !== N) throw new Error(`${mode}: ${informer.store.size} cached, ${queue.length} queued, ${N} expected`);
        rows.push({
          mode,
          round,
          'worst stall ms': Math.round(stalls.max),
          'p99 stall ms': Math.round(stalls.p99),
          'sync s': Math.round(syncMs / 100) / 10,
          load: loadavg()[0]!.toFixed(1),
        });
        console.log(JSON.stringify(rows[rows.length - 1]));
      }
    }
  } finally {
    await plane.stop();
  }
  console.log(`\n${N} ${SHAPE} ConfigMaps, ${ROUNDS} rounds, interleaved; node ${process.version}`);
  table(rows);
}

void main().catch((err) => {
  console.error(err);
  process.exit(1);
});
