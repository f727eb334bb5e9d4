// Each operator's memory in its container (kind, read by the kubelet from the container's cgroup)
// next to the same operator bundle as a host process against the same cluster: idle after install,
// and after its samples have converged. The container's `rss` (anonymous memory) compares with the
// host process's RssAnon; the working set adds the page cache the kubelet counts against limits.
// The host process runs twice: on this machine's Node and on the image's Node 24 binary.
import { imageNodeBinary } from '@opkit/testing/containers';
import { findBinary, helmInstall, requireBuilt, startE2ECluster, waitFor, workspaceApp, workspaceRoot, type E2ECluster } from '@opkit/testing';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { processMemory } from '../process-stats.js';
import { containerMemory } from './container-memory.js';
import { mib, table, runBench } from '../report.js';

const SETTLE_MS = 20_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Op {
  app: string;
  release: string;
  namespace: string;
  /** Applies the operator's samples (in kind: with images that run here) and waits for them to converge. */
  work(cluster: E2ECluster): Promise<void>;
  cleanup(cluster: E2ECluster): Promise<void>;
}

const samples = (file: string) =>
  parseAllDocuments(readFileSync(join(workspaceRoot(), file), 'utf8')).map(
    (d) => d.toJSON() as { kind: string; metadata: { name: string }; spec: Record<string, unknown> },
  );
const apply = (cluster: E2ECluster, ns: string, objs: object[]) =>
  cluster.kubectl(['apply', '-n', ns, '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objs }) });
const ready = (cluster: E2ECluster, ns: string, what: string, jsonpath: string, want: string) =>
  waitFor(`${what} ${want}`, async () => (await cluster.kubectl(['get', what, '-n', ns, '-o', `jsonpath=${jsonpath}`])).stdout.trim() === want, {
    timeoutMs: 180_000,
    intervalMs: 1_000,
  });

const OPERATORS: Op[] = [
  {
    app: 'memcached-operator',
    release: 'memcached',
    namespace: 'memcached-system',
    async work(c) {
      await c.kubectl(['create', 'namespace', 'cache']);
      await apply(
        c,
        'cache',
        samples('apps/memcached-operator/examples/memcached.yaml').map((s) => ({ ...s, spec: { ...s.spec, image: c.images.memcached } })),
      );
      await ready(c, 'cache', 'memcached/memcached-sample', '{.status.phase}', 'Available');
    },
    async cleanup(c) {
      await c.kubectl(['delete', 'memcacheds', '--all', '-n', 'cache', '--wait=true']);
    },
  },
  {
    app: 'cdn-operator',
    release: 'cdn',
    namespace: 'cdn-system',
    async work(c) {
      await c.kubectl(['create', 'namespace', 'edge']);
      await apply(
        c,
        'edge',
        samples('apps/cdn-operator/examples/cdnclusters.yaml').map((s) => ({ ...s, spec: { ...s.spec, image: c.images.nginx } })),
      );
      for (const n of ['cache-live', 'cache-vod', 'balancer']) await ready(c, 'edge', `cdncluster/${n}`, '{.status.state}', 'Running');
    },
    async cleanup(c) {
      await c.kubectl(['delete', 'cdnclusters', '--all', '-n', 'edge', '--wait=true']);
    },
  },
  {
    app: 'cert-operator',
    release: 'cert',
    namespace: 'cert-system',
    async work(c) {
      await c.kubectl(['create', 'namespace', 'shop']);
      await apply(c, 'shop', samples('apps/cert-operator/examples/ca-issuer.yaml'));
      await ready(c, 'shop', 'certificate/example-com', '{.status.conditions[?(@.type=="Ready")].status}', 'True');
    },
    async cleanup(c) {
      await c.kubectl(['delete', 'certificates,issuers', '--all', '-n', 'shop', '--wait=true']);
    },
  },
];

/** The operator container's memory, from the kubelet's summary (cAdvisor reading its cgroup). */
/** The operator's manager container, in the first pod of the release. */
async function operatorMemory(c: E2ECluster, ns: string, release: string) {
  const pod = (
    await c.kubectl(['get', 'pods', '-n', ns, '-l', `app.kubernetes.io/instance=${release}`, '-o', 'jsonpath={.items[0].metadata.name}'])
  ).stdout.trim();
  return containerMemory(c, pod, 'manager');
}

/** The same bundle as a host process against the cluster, with the image's environment; its RSS and RssAnon once settled. */
async function hostMemory(c: E2ECluster, op: Op, node: string) {
  const app = workspaceApp(op.app);
  const child = spawn(
    node,
    [
      app.bundle,
      `--kubeconfig=${c.kubeconfigPath}`,
      '--metrics-bind-address=127.0.0.1:0',
      '--health-probe-bind-address=127.0.0.1:0',
      '--webhook-bind-address=127.0.0.1:0',
    ],
    {
      env: { PATH: process.env.PATH, ...app.local.env, POD_NAMESPACE: op.namespace },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let log = '';
  child.stdout!.on('data', (d) => (log = (log + d).slice(-20_000)));
  child.stderr!.on('data', (d) => (log = (log + d).slice(-20_000)));
  try {
    await waitFor(`${op.app} on the host to start its controllers`, () => log.includes('controller started'), { timeoutMs: 60_000 });
    await sleep(SETTLE_MS);
    return processMemory(child.pid!);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

const scale = async (c: E2ECluster, op: Op, replicas: number) => {
  await c.kubectl(['scale', 'deployment', '-n', op.namespace, '-l', `app.kubernetes.io/instance=${op.release}`, `--replicas=${replicas}`]);
  if (replicas) await c.waitOperatorReady(op.namespace, op.release);
  else
    await waitFor(
      'the operator pod gone',
      async () => !(await c.kubectl(['get', 'pods', '-n', op.namespace, '-l', `app.kubernetes.io/instance=${op.release}`, '-o', 'name'])).stdout.trim(),
      { timeoutMs: 90_000 },
    );
};

async function main() {
  const apps = [...OPERATORS.map((o) => workspaceApp(o.app)), workspaceApp('acme-solver')];
  requireBuilt(apps);
  const node24 = await imageNodeBinary();
  const cluster = await startE2ECluster('kind', { apps, workloads: ['memcached', 'nginx'] });
  const rows: Record<string, string | number>[] = [];
  try {
    for (const op of OPERATORS) {
      const app = apps.find((a) => a.app === op.app)!;
      await helmInstall(cluster, { release: op.release, namespace: op.namespace, app });
      for (const phase of ['idle', 'after its samples'] as const) {
        if (phase !== 'idle') await op.work(cluster);
        await sleep(SETTLE_MS);
        const inContainer = await operatorMemory(cluster, op.namespace, op.release);
        await scale(cluster, op, 0);
        const host = await hostMemory(cluster, op, process.execPath);
        const host24 = await hostMemory(cluster, op, node24);
        await scale(cluster, op, 1);
        rows.push({
          operator: op.app,
          when: phase,
          'container working set MiB': mib(inContainer.ws),
          'container rss MiB': mib(inContainer.rss),
          [`host Node ${process.versions.node} VmRSS / RssAnon MiB`]: `${mib(host.rss)} / ${mib(host.anon)}`,
          "host Node 24 (the image's) VmRSS / RssAnon MiB": `${mib(host24.rss)} / ${mib(host24.anon)}`,
        });
      }
      await op.cleanup(cluster);
      await cluster.helm(['uninstall', op.release, '-n', op.namespace, '--wait']);
    }
  } finally {
    await cluster.stop();
  }
  table(rows);
  console.log(
    `kubectl ${findBinary('kubectl')}; load average ${(await import('node:os'))
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
}

runBench(main);
