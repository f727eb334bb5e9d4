// The memcached operator as one replica and as a shard ring of three (`--shard`), on an API server
// with ShardedListAndWatch (each replica caches only its share of the Memcacheds: server-side
// selection) and on one without it (every replica caches every Memcached and drops others' keys:
// client-side). Each run: N Memcacheds of size 0 (the operator's work alone: a Deployment and a
// status each), the replicas started together, timed until every Memcached has its Deployment and
// a status for its generation. Printed per run: time, CPU and RSS of each replica, and the CPU the
// API server and etcd spent; then the load average. Each run has a control plane of its own.
//   OPKIT_BENCH_SHARD_N=10000        Memcacheds per run
//   OPKIT_BENCH_SHARD_REPLICAS=1,3   ring sizes to run
//   OPKIT_BENCH_SHARD_SELECTION=server,client
import { Client, Deployment, Namespace, Transport } from '@opkit/runtime';
import { imageNodeBinary } from '@opkit/testing/containers';
import { startControlPlane, waitFor, workspaceApp, workspaceRoot, type ControlPlane } from '@opkit/testing';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { Memcached } from '../../apps/memcached-operator/src/api/v1beta1/memcached.js';
import { MemcachedAPI } from '../../apps/memcached-operator/src/api/conversion.js';
import { loadAverage, runBench, table } from '../report.js';
import { allocatorOf, cpuSeconds, descendantCpuSeconds, descendantPids, processMemory } from '../process-stats.js';
import { opkitCommand } from './opkit-command.js';
import { watchedCount } from './watched-count.js';

const N = Number(process.env.OPKIT_BENCH_SHARD_N ?? 10_000);
const RING_SIZES = (process.env.OPKIT_BENCH_SHARD_REPLICAS ?? '1,3').split(',').map(Number);
const SELECTIONS = (process.env.OPKIT_BENCH_SHARD_SELECTION ?? 'server,client').split(',') as ('server' | 'client')[];
const API_PROCESSES = ['kube-apiserver', 'etcd'];
// 10,000 took 8 minutes here (one replica); 50,000 is given five times that and half an hour more.
const DEADLINE_MS = (30 + Math.ceil(N / 1_000)) * 60_000;
const root = workspaceRoot();
const fmt = (x: number, d = 1) => x.toFixed(d);
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

interface Run {
  selection: 'server' | 'client';
  replicas: number;
  seconds: number;
  /** Per replica, at the end of the run. */
  cpu: number[];
  rss: number[];
  apiCpu: number;
  apiRss: number;
}

async function runOnce(plane: ControlPlane, selection: Run['selection'], replicas: number, cmd: [string, string[]], ns: string): Promise<Run> {
  const transport = new Transport(plane.kubeConfig);
  const admin = new Client(transport, { fieldManager: 'bench' });
  await admin.create(Namespace, { metadata: { name: ns } });
  for (let i = 0; i < N; i += 100) {
    await Promise.all(
      Array.from({ length: Math.min(100, N - i) }, (_, j) =>
        admin.create(Memcached.kind, { metadata: { name: `mc-${i + j}`, namespace: ns }, spec: { replicas: 0 } } as never),
      ),
    );
  }
  const deployments = await watchedCount(transport, Deployment, ns, (d) => d.spec?.replicas === 0);
  const observed = await watchedCount(transport, Memcached.kind, ns, (m) => m.status?.observedGeneration === m.metadata.generation);
  const apiCpu0 = descendantCpuSeconds(API_PROCESSES);
  const t0 = performance.now();
  const children: ChildProcess[] = [];
  let stderr = '';
  for (let r = 0; r < replicas; r++) {
    const c = spawn(cmd[0], [...cmd[1], '--shard', `--shard-namespace=${ns}`], {
      env: {
        ...process.env,
        ...workspaceApp('memcached-operator').local.env,
        WATCH_NAMESPACE: ns,
        POD_NAMESPACE: ns,
        // No POD_NAME and POD_UID: there are no pods for a member Lease to be owned by (the garbage
        // collector would delete it, and the replica would leave the ring).
      },
      stdio: ['ignore', process.env.OPKIT_BENCH_SHARD_LOGS ? 'inherit' : 'ignore', 'pipe'],
    });
    c.stderr!.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
    children.push(c);
  }
  const alive = () => {
    const dead = children.find((c) => c.exitCode !== null);
    if (dead) throw new Error(`a replica exited (${dead.exitCode}): ${stderr}`);
  };
  for (const [c, what] of [
    [deployments, 'Deployments'],
    [observed, 'statuses for their generation'],
  ] as const) {
    if (!(await c.until(N, `${what} (${replicas} replicas, ${selection}-side)`, { deadlineMs: DEADLINE_MS, alive })).reached)
      throw new Error(`${what}: ${c.count} of ${N} after ${DEADLINE_MS / 60_000} minutes`);
  }
  const seconds = (performance.now() - t0) / 1000;
  const apiCpu = descendantCpuSeconds(API_PROCESSES) - apiCpu0;
  await Promise.all([deployments.stop(), observed.stop()]);
  await new Promise((r) => setTimeout(r, 2_000));
  const run: Run = {
    selection,
    replicas,
    seconds,
    cpu: children.map((c) => cpuSeconds(c.pid!)),
    rss: children.map((c) => processMemory(c.pid!).rss / 2 ** 20),
    apiCpu,
    // This run's API server, not the newest of that name: tests may run their own beside a bench.
    apiRss: sum(descendantPids(['kube-apiserver']).map((pid) => processMemory(pid).rss)) / 2 ** 20,
  };
  for (const c of children) c.kill('SIGTERM');
  await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(undefined) : c.on('exit', r)))));
  return run;
}

const row = (r: Run) => ({
  selection: `${r.selection}-side`,
  replicas: r.replicas,
  'first pass s': fmt(r.seconds),
  'CPU s per replica': r.cpu.map((c) => fmt(c, 1)).join(' / '),
  'CPU s all replicas': fmt(sum(r.cpu), 1),
  'RSS MiB per replica': r.rss.map((m) => fmt(m, 0)).join(' / '),
  'RSS MiB all replicas': fmt(sum(r.rss), 0),
  'API server + etcd CPU s': fmt(r.apiCpu, 1),
  'API server RSS MiB': fmt(r.apiRss, 0),
});

async function main() {
  const bundle = join(root, 'dist/bench/compare-memcached-sharded/main.js');
  const { bundle: build } = (await import(join(root, 'tools/build/bundle.mjs'))) as { bundle: (e: string, o: string) => Promise<unknown> };
  await build(join(root, 'apps/memcached-operator/src/main.ts'), bundle);
  const node = process.env.OPKIT_BENCH_COMPARE_NODE === 'host' ? process.execPath : await imageNodeBinary();
  const nodeVersion = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  const runs: Run[] = [];
  for (const selection of SELECTIONS) {
    for (const replicas of RING_SIZES) {
      // A control plane per run: each starts from an empty etcd (no run pays for the one before,
      // and nothing is cleaned up: at 50,000 deleting a run's objects took longer than the run).
      // A controller manager for the Deployments' ReplicaSets, no nodes (size 0).
      const plane = await startControlPlane({
        controllerManager: true,
        apiServerArgs: selection === 'server' ? ['--feature-gates=ShardedListAndWatch=true'] : [],
      });
      try {
        const admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'bench' });
        await plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify(MemcachedAPI.crd) });
        await waitFor('the CRD', () => admin.list(Memcached.kind).then(() => true));
        const run = await runOnce(plane, selection, replicas, opkitCommand(node, bundle, plane.kubeconfigPath), `${selection}-${replicas}`);
        runs.push(run);
        // The whole row as soon as a run ends: at 50,000 a series takes hours, and one stopped
        // part-way keeps the figures of the runs it finished.
        console.log(`${replicas} replica(s), ${selection}-side, load ${loadavg()[0]!.toFixed(2)}: ${JSON.stringify(row(run))}`);
      } finally {
        await plane.stop();
      }
    }
  }
  table(runs.map(row));
  console.log(
    `${N} Memcacheds of size 0 (a Deployment and a status each); replicas on Node ${nodeVersion}, ${allocatorOf(workspaceApp('memcached-operator').local.env)}, 2 workers each; load average ${loadAverage()}`,
  );
}

runBench(main);
