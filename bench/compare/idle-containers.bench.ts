// Container against container (issue 32): opkit's memcached operator, installed by its chart, and
// the same operator on Go's controller-runtime (compare/go-memcached), each in an image built here
// the same way (opkit's on the Node runtime base, Go's static binary on the static base the
// control-plane images use), in one kind cluster, one after the other: the container's memory as
// the kubelet reads it from its cgroup, idle after start and after the sample Memcached converged.
// The Go operator runs with the chart's resources and the same RBAC; each caches the same kinds, and
// each runs the same servers beside its controller: HTTPS metrics behind TokenReview and
// SubjectAccessReview, health probes, leader election and a webhook server (servers.go).
// opkit's runs once per variant of its environment (the allocator the image preloads, V8's heap
// flags: what each saves).
//   OPKIT_BENCH_IDLE_ROUNDS=2     rounds, all of them interleaved in each
//   OPKIT_BENCH_IDLE_ENV='|LD_PRELOAD=|NODE_OPTIONS=--max-semi-space-size=1'
//                                 the variants, '|'-separated, each NAME=value settings separated by
//                                 ';' ('' is the chart and image as they come; `LD_PRELOAD=` runs
//                                 glibc's malloc instead of the image's jemalloc)
import { ensureImage, pushImage, recipes, type ImageRecipe } from '@opkit/testing/containers';
import { helmInstall, requireBuilt, startE2ECluster, waitFor, workspaceApp, workspaceRoot, type E2ECluster } from '@opkit/testing';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { containerMemory } from '../containers/container-memory.js';
import { median } from '../process-stats.js';
import { loadAverage, mib, runBench, table } from '../report.js';
import { buildGoComparator } from './go-build.js';

const ROUNDS = Number(process.env.OPKIT_BENCH_IDLE_ROUNDS ?? 2);
const SETTLE_MS = 20_000;
const VARIANTS = (process.env.OPKIT_BENCH_IDLE_ENV ?? '|LD_PRELOAD=|NODE_OPTIONS=--max-semi-space-size=1').split('|').map((v) =>
  v
    .split(';')
    .map((kv) => kv.trim())
    .filter(Boolean)
    .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)] as const),
);
/** Every name some variant sets: a variant that does not set one leaves the image's. */
const VARIANT_NAMES = [...new Set(VARIANTS.flat().map(([k]) => k))];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const OPKIT = { namespace: 'memcached-system', release: 'memcached' };
const GO = { namespace: 'go-memcached-system', name: 'go-memcached' };
const SAMPLES = 'cache';
const GO_ROW = 'Go controller-runtime';

/** The Go operator's Deployment and RBAC: what the memcached chart gives opkit's, no more. */
function goManifests(image: string) {
  const labels = { 'app.kubernetes.io/name': GO.name, 'app.kubernetes.io/instance': GO.name };
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: GO.namespace } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: GO.name, namespace: GO.namespace } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: GO.name },
      rules: [
        { apiGroups: ['cache.opkit.dev'], resources: ['memcacheds'], verbs: ['get', 'list', 'watch', 'update', 'patch'] },
        { apiGroups: ['cache.opkit.dev'], resources: ['memcacheds/status', 'memcacheds/finalizers'], verbs: ['get', 'update', 'patch'] },
        { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
        { apiGroups: [''], resources: ['services'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
        { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
        // The metrics server's filter, as the chart's metrics-auth rules.
        { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
        { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: GO.name, namespace: GO.namespace },
      rules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: GO.name, namespace: GO.namespace },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: GO.name },
      subjects: [{ kind: 'ServiceAccount', name: GO.name, namespace: GO.namespace }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: GO.name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: GO.name },
      subjects: [{ kind: 'ServiceAccount', name: GO.name, namespace: GO.namespace }],
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: GO.name, namespace: GO.namespace, labels },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: GO.name,
            securityContext: { runAsNonRoot: true, runAsUser: 65532 },
            containers: [
              {
                name: 'manager',
                image,
                command: ['/usr/local/bin/go-memcached'],
                // The servers opkit's chart turns on, on the chart's ports.
                args: [
                  '--metrics-bind-address=:8443',
                  '--metrics-secure',
                  '--health-probe-bind-address=:8081',
                  '--leader-elect',
                  `--leader-election-id=${GO.name}`,
                  '--webhook-port=9443',
                  '--webhook-cert-dir=/tmp/webhook-certs',
                ],
                env: [{ name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } }],
                ports: [
                  { name: 'metrics', containerPort: 8443 },
                  { name: 'probes', containerPort: 8081 },
                  { name: 'webhook', containerPort: 9443 },
                ],
                livenessProbe: { httpGet: { path: '/healthz', port: 'probes' }, initialDelaySeconds: 15, periodSeconds: 20 },
                readinessProbe: { httpGet: { path: '/readyz', port: 'probes' }, periodSeconds: 10 },
                volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
                // As the chart's: requests 96Mi, limit 256Mi.
                resources: { requests: { cpu: '100m', memory: '96Mi' }, limits: { memory: '256Mi' } },
                securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
              },
            ],
            // The webhook's certificate is written here (the root filesystem is read-only).
            volumes: [{ name: 'tmp', emptyDir: { medium: 'Memory', sizeLimit: '1Mi' } }],
          },
        },
      },
    },
  ];
}

const apply = (c: E2ECluster, objs: object[], ns?: string) =>
  c.kubectl(['apply', ...(ns ? ['-n', ns] : []), '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objs }) });

/** The first pod of the instance, or '' when it has none (`items[0]` would fail on an empty list). */
const podOf = async (c: E2ECluster, ns: string, instance: string) =>
  (await c.kubectl(['get', 'pods', '-n', ns, '-l', `app.kubernetes.io/instance=${instance}`, '-o', 'jsonpath={.items[*].metadata.name}'])).stdout
    .trim()
    .split(/\s+/)[0] ?? '';

/** The memcached operator's sample, read once. */
const SAMPLE = parseAllDocuments(readFileSync(join(workspaceRoot(), 'apps/memcached-operator/examples/memcached.yaml'), 'utf8')).map(
  (d) => d.toJSON() as { spec: Record<string, unknown> },
);

/** Idle, then with the sample converged: the manager container's memory, and the sample removed again. */
async function measure(c: E2ECluster, ns: string, instance: string) {
  await sleep(SETTLE_MS);
  const pod = await podOf(c, ns, instance);
  const idle = await containerMemory(c, pod, 'manager');
  await apply(
    c,
    SAMPLE.map((s) => ({ ...s, spec: { ...s.spec, image: c.images.memcached } })),
    SAMPLES,
  );
  await waitFor(
    'the sample Memcached Available',
    async () => (await c.kubectl(['get', 'memcached/memcached-sample', '-n', SAMPLES, '-o', 'jsonpath={.status.phase}'])).stdout.trim() === 'Available',
    { timeoutMs: 180_000, intervalMs: 1_000 },
  );
  await sleep(SETTLE_MS);
  const busy = await containerMemory(c, pod, 'manager');
  await c.kubectl(['delete', 'memcacheds', '--all', '-n', SAMPLES, '--wait=true']);
  return { idle, busy };
}

/** opkit's Deployment with this variant's environment (and none of the others'), set while it is scaled to nothing. */
const setVariant = (c: E2ECluster, variant: (typeof VARIANTS)[number]) =>
  c.kubectl([
    'set',
    'env',
    'deployment',
    '-n',
    OPKIT.namespace,
    '-l',
    `app.kubernetes.io/instance=${OPKIT.release}`,
    ...VARIANT_NAMES.map((name) => {
      const set = variant.find(([k]) => k === name);
      return set ? `${name}=${set[1]}` : `${name}-`;
    }),
  ]);

const scaleOpkit = async (c: E2ECluster, replicas: number) => {
  await c.kubectl(['scale', 'deployment', '-n', OPKIT.namespace, '-l', `app.kubernetes.io/instance=${OPKIT.release}`, `--replicas=${replicas}`]);
  if (replicas) await c.waitOperatorReady(OPKIT.namespace, OPKIT.release);
  else await waitFor('opkit gone', async () => !(await podOf(c, OPKIT.namespace, OPKIT.release)), { timeoutMs: 90_000 });
};

async function main() {
  const goBin = buildGoComparator('go-memcached', 'the Go comparator (controller-runtime v0.25.2)');
  const hash = createHash('sha256').update(readFileSync(goBin)).digest('hex').slice(0, 12);
  const goRecipe: ImageRecipe = {
    repository: 'opkit.local/bench/go-memcached',
    version: hash,
    dockerfile: 'binaries',
    bases: { STATIC_IMAGE: recipes.static },
    files: async () => ({ 'bin/go-memcached': goBin }),
  };
  const app = workspaceApp('memcached-operator');
  requireBuilt([app]);
  // The cluster first: it starts the container engine the Go image is built with.
  const cluster = await startE2ECluster('kind', { apps: [app], workloads: ['memcached'] });
  const rows: { operator: string; round: number; idleWs: number; idleRss: number; busyWs: number; busyRss: number }[] = [];
  try {
    const goLocal = await ensureImage(goRecipe);
    const pushed = await pushImage(goLocal, cluster.published!.registry, 'bench/go-memcached', hash);
    await cluster.kubectl(['create', 'namespace', SAMPLES]);
    await helmInstall(cluster, { release: OPKIT.release, namespace: OPKIT.namespace, app });
    await scaleOpkit(cluster, 0);
    for (let round = 1; round <= ROUNDS; round++) {
      // opkit, once per variant: its chart's Deployment given the variant, scaled up, measured, scaled down.
      for (const variant of VARIANTS) {
        if (VARIANT_NAMES.length) await setVariant(cluster, variant);
        await scaleOpkit(cluster, 1);
        const o = await measure(cluster, OPKIT.namespace, OPKIT.release);
        await scaleOpkit(cluster, 0);
        const operator = variant.length ? `opkit, ${variant.map(([k, v]) => `${k}=${v}`).join(' ')}` : 'opkit';
        rows.push({ operator, round, idleWs: o.idle.ws, idleRss: o.idle.rss, busyWs: o.busy.ws, busyRss: o.busy.rss });
        console.log(`${operator}, round ${round}: idle working set ${mib(o.idle.ws)} MiB; load ${loadAverage()}`);
      }
      // Go: its Deployment applied, measured, deleted.
      await apply(cluster, goManifests(pushed.ref));
      await cluster.kubectl(['rollout', 'status', `deployment/${GO.name}`, '-n', GO.namespace, '--timeout=180s']);
      const g = await measure(cluster, GO.namespace, GO.name);
      await cluster.kubectl(['delete', 'deployment', GO.name, '-n', GO.namespace, '--wait=true']);
      rows.push({ operator: GO_ROW, round, idleWs: g.idle.ws, idleRss: g.idle.rss, busyWs: g.busy.ws, busyRss: g.busy.rss });
      console.log(`Go round ${round}: idle working set ${mib(g.idle.ws)} MiB; load ${loadAverage()}`);
    }
  } finally {
    await cluster.stop();
  }
  table(
    rows.map((r) => ({
      operator: r.operator,
      round: r.round,
      'working set idle MiB': mib(r.idleWs),
      'rss idle MiB': mib(r.idleRss),
      'working set, sample converged MiB': mib(r.busyWs),
      'rss, sample converged MiB': mib(r.busyRss),
    })),
  );
  type Measure = 'idleWs' | 'idleRss' | 'busyWs' | 'busyRss';
  const of = (op: string, k: Measure) => median(rows.filter((r) => r.operator === op).map((r) => r[k]));
  for (const op of [...new Set(rows.map((r) => r.operator))].filter((op) => op !== GO_ROW)) {
    const ratio = (k: Measure) => (of(op, k) / of(GO_ROW, k)).toFixed(2);
    console.log(
      `${op} ÷ Go (medians of ${ROUNDS}): working set idle ${ratio('idleWs')}, rss idle ${ratio('idleRss')}, working set converged ${ratio('busyWs')}, rss converged ${ratio('busyRss')}`,
    );
  }
  console.log(`load average ${loadAverage()}`);
}

runBench(main);
