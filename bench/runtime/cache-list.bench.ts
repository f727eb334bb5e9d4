// The cost of a cache list as the cache grows: the memcached operator's pod lookup (one namespace,
// the instance and managed-by labels of one Memcached: 3 matches) and a namespace list, over
// 1k, 10k and 50k cached pods in 100 namespaces, read through the store's indexes as Cache.list
// reads them; next to a scan of every object with the same selector (what the cache did before).
// Flat µs per list as the cache grows means O(matches).
import { parseSelector } from '../../packages/runtime/src/cache/label-selector.js';
import { Store } from '../../packages/runtime/src/cache/store.js';
import type { KubeObject } from '../../packages/runtime/src/client/types.js';
import { loadavg } from 'node:os';
import { table } from '../report.js';

const NAMESPACES = 100;
const PER_INSTANCE = 3;

function pods(n: number): KubeObject[] {
  return Array.from({ length: n }, (_, i) => {
    const instance = `mc-${Math.floor(i / PER_INSTANCE)}`;
    return {
      metadata: {
        name: `${instance}-${i % PER_INSTANCE}`,
        namespace: `ns-${Math.floor(i / PER_INSTANCE) % NAMESPACES}`,
        uid: `uid-${i}`,
        resourceVersion: '1',
        labels: {
          'app.kubernetes.io/name': 'memcached',
          'app.kubernetes.io/instance': instance,
          'app.kubernetes.io/managed-by': 'memcached-operator',
          'pod-template-hash': 'abc',
        },
      },
    };
  });
}

/** µs per call, the median of 5 rounds of `reps` calls. */
function time(fn: (i: number) => number, reps: number): { us: number; found: number } {
  const rounds: number[] = [];
  let found = 0;
  for (let r = 0; r < 5; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < reps; i++) found = fn(i);
    rounds.push(Number(process.hrtime.bigint() - t0) / 1e3 / reps);
  }
  return { us: rounds.sort((a, b) => a - b)[2]!, found };
}

const rows = [];
for (const n of [1_000, 10_000, 50_000]) {
  const store = new Store<KubeObject>();
  store.replace(pods(n));
  const instances = Math.floor(n / PER_INSTANCE);
  const selectorOf = (i: number) => `app.kubernetes.io/instance=mc-${i % instances},app.kubernetes.io/managed-by=memcached-operator`;
  const namespaceOf = (i: number) => `ns-${(i % instances) % NAMESPACES}`;
  // As Cache.list: the store's indexes, then the selector's remaining terms.
  const indexed = (i: number) => {
    const sel = parseSelector(selectorOf(i));
    return store.select({ namespace: namespaceOf(i), labels: sel.equalities }).filter((o) => sel.matches(o.metadata.labels)).length;
  };
  const scan = (i: number) => {
    const sel = parseSelector(selectorOf(i));
    const ns = namespaceOf(i);
    return store.select({}).filter((o) => o.metadata.namespace === ns && sel.matches(o.metadata.labels)).length;
  };
  indexed(0); // builds the label indexes once, as the first reconcile would
  const pod = time(indexed, 2_000);
  const podScan = time(scan, n >= 50_000 ? 20 : 200);
  const ns = time((i) => store.select({ namespace: namespaceOf(i) }).length, 2_000);
  rows.push({
    'cached pods': n.toLocaleString('en'),
    'pod lookup µs (indexed)': pod.us.toFixed(1),
    'pod lookup µs (scan)': podScan.us.toFixed(0),
    matches: pod.found,
    'namespace list µs (indexed)': ns.us.toFixed(1),
    'namespace matches': ns.found,
  });
}
table(rows);
console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}; the pod lookup is the memcached operator's podsOf (3 matches), run once per reconcile`,
);
