// opkit's memcached operator side by side with the same operator on Go's controller-runtime
// (bench/compare/go-memcached, built here from its Go module), on one API server with simulated
// nodes: runs interleaved (opkit, Go, opkit, Go…), each in a namespace of its own, each timed from
// the operator's start: until its own part is done (every Memcached has its Deployment asking for
// its pods and a status for its generation: the first pass) and until every Memcached is Available
// with its pods ready (which also waits for the simulated cluster to run the pods). Printed per run
// and as ratios (opkit / Go; below 1 opkit is faster or smaller), with the load average.
//   OPKIT_BENCH_COMPARE_N=1000       Memcached objects per run
//   OPKIT_BENCH_COMPARE_SIZE=2       pods per Memcached (0: the operator's work alone, for 10,000)
//   OPKIT_BENCH_COMPARE_ROUNDS=2     pairs of runs
//   OPKIT_BENCH_COMPARE_WORKERS=2    workers in each operator (opkit's memcached controller has 2)
//   OPKIT_BENCH_COMPARE_NODE=image   the Node running opkit: `image` (the image's Node 24) or `host`
//   OPKIT_BENCH_COMPARE_SETTLE_S=30  RSS is read at convergence and again this long after, both sides
//                                 idle (the steady state: each runtime returns what it no longer needs)
//   OPKIT_BENCH_NODE_ARGS='|--max-semi-space-size=1'  node flags for opkit (V8 settings to try):
//                                 '|'-separated variants, each run in every round ('' is Node's defaults)
import { Client, Deployment, Namespace, Transport } from '@opkit/runtime';
import { imageNodeBinary } from '@opkit/testing/containers';
import { startControlPlane, waitFor, workspaceApp, workspaceRoot, type ControlPlane } from '@opkit/testing';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { Memcached } from '../../apps/memcached-operator/src/api/v1beta1/memcached.js';
import { MemcachedAPI } from '../../apps/memcached-operator/src/api/conversion.js';
import { table, runBench } from '../report.js';
import { allocatorOf, cpuSeconds, median, processMemory } from '../process-stats.js';
import { nodeArgVariants, opkitCommand } from './opkit-command.js';
import { buildGoComparator } from './go-build.js';
import { requestsBy } from './requests-by.js';
import { watchedCount, type WatchedCount } from './watched-count.js';

const N = Number(process.env.OPKIT_BENCH_COMPARE_N ?? 1000);
const ROUNDS = Number(process.env.OPKIT_BENCH_COMPARE_ROUNDS ?? 2);
const WORKERS = Number(process.env.OPKIT_BENCH_COMPARE_WORKERS ?? 2);
const SIZE = Number(process.env.OPKIT_BENCH_COMPARE_SIZE ?? 2);
const SETTLE_S = Number(process.env.OPKIT_BENCH_COMPARE_SETTLE_S ?? 30);
const root = workspaceRoot();

interface Run {
  /** 'go', 'opkit', or 'opkit <node flags>'. */
  operator: string;
  round: number;
  firstPass: number;
  firstPassCpu: number;
  converge: number;
  resyncCpu: number;
  cpu: number;
  rss: number;
  /** RSS after SETTLE_S idle. */
  settledRss: number;
  writesPerCr: number;
  /** Writes per CR by what was written ("memcacheds/status update", "… 409" for a conflict): where writes per CR come from. */
  writesBy: Record<string, number>;
  resyncWrites: number;
}

async function runOnce(plane: ControlPlane, transport: Transport, label: string, round: number, cmd: [string, string[]], ns: string): Promise<Run> {
  const isGo = label === 'go';
  const admin = new Client(transport, { fieldManager: 'bench' });
  await admin.create(Namespace, { metadata: { name: ns } });
  await waitFor('the default ServiceAccount', () => plane.kubectl(['get', 'serviceaccount', 'default', '-n', ns]).then(() => true), { timeoutMs: 30_000 });
  for (let i = 0; i < N; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, N - i) }, (_, j) =>
        admin.create(Memcached.kind, { metadata: { name: `mc-${i + j}`, namespace: ns }, spec: { replicas: SIZE } } as never),
      ),
    );
  }
  const since = new Date();
  let stderr = '';
  const start = (): ChildProcess => {
    // opkit with the environment its image sets (apps/Dockerfile).
    const c = spawn(cmd[0], cmd[1], {
      env: { ...process.env, ...(isGo ? {} : workspaceApp('memcached-operator').local.env), WATCH_NAMESPACE: ns, POD_NAMESPACE: ns },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    c.stderr!.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
    return c;
  };
  // Counted from watches (./watched-count.ts), not by listing every object each second.
  const deployments = await watchedCount(transport, Deployment, ns, (d) => d.spec?.replicas === SIZE);
  const observed = await watchedCount(transport, Memcached.kind, ns, (m) => m.status?.observedGeneration === m.metadata.generation);
  const available = await watchedCount(transport, Memcached.kind, ns, (m) => m.status?.phase === 'Available' && m.status.readyReplicas === SIZE);
  const t0 = performance.now();
  let child = start();
  // The operator's own part: every Memcached has its Deployment asking for its pods, and a status
  // for its generation. What follows (pods scheduled and running) is the simulated cluster's.
  const alive = () => {
    if (child.exitCode !== null) throw new Error(`${label} exited (${child.exitCode}): ${stderr}`);
  };
  const within = async (c: WatchedCount, what: string) => {
    if (!(await c.until(N, what, { deadlineMs: 30 * 60_000, alive })).reached) throw new Error(`${what}: ${c.count} of ${N} after 30 minutes`);
  };
  await within(deployments, `Deployments asking for ${SIZE} pods (${label})`);
  await within(observed, `Memcached statuses for their generation (${label})`);
  const firstPass = (performance.now() - t0) / 1000;
  const firstPassCpu = cpuSeconds(child.pid!);
  await within(available, `Memcacheds Available (${label})`);
  await Promise.all([deployments.stop(), observed.stop(), available.stop()]);
  const converge = (performance.now() - t0) / 1000;
  const cpu = cpuSeconds(child.pid!);
  await new Promise((r) => setTimeout(r, 2_000));
  const rss = processMemory(child.pid!).rss / 2 ** 20;
  await new Promise((r) => setTimeout(r, SETTLE_S * 1000));
  alive();
  const settledRss = processMemory(child.pid!).rss / 2 ** 20;
  const ours = (e: { userAgent?: string }) => (e.userAgent ?? '').startsWith(isGo ? 'go-memcached-operator' : 'memcached-operator/');
  const written = plane.audit!.writes({ since }).filter((e) => ours(e) && e.objectRef?.namespace === ns);
  const writesBy = requestsBy(written, N);
  // A restart over converged objects: a full resync that must write nothing.
  child.kill('SIGTERM');
  await new Promise((r) => child.on('exit', r));
  const resyncFrom = new Date();
  child = start();
  await new Promise((r) => setTimeout(r, 20_000));
  // Start-up cost: a fresh process over converged objects (start, cache sync, a full resync that writes nothing).
  const resyncCpu = cpuSeconds(child.pid!);
  const resyncWrites = plane
    .audit!.writes({ since: resyncFrom })
    .filter((e) => ours(e) && e.objectRef?.namespace === ns && e.objectRef?.resource !== 'events' && e.objectRef?.resource !== 'leases').length;
  child.kill('SIGTERM');
  await new Promise((r) => child.on('exit', r));
  // Clean up for the next run: no operator removes the finalizers now, so the patch does.
  const left = await admin.listAll(Memcached.kind, { namespace: ns });
  for (let i = 0; i < left.length; i += 50) {
    await Promise.all(
      left.slice(i, i + 50).map((m) => admin.patch(Memcached.kind, { namespace: ns, name: m.metadata.name! }, { metadata: { finalizers: null } })),
    );
  }
  await plane.kubectl(['delete', 'namespace', ns, '--wait=false']);
  await waitFor(
    `namespace ${ns} gone (its pods free the simulated nodes for the next run)`,
    async () => (await plane.kubectl(['get', 'namespace', ns], { check: false })).code !== 0,
    { timeoutMs: 900_000, intervalMs: 2_000 },
  );
  return {
    operator: label,
    round,
    firstPass,
    firstPassCpu,
    converge,
    resyncCpu,
    cpu,
    rss,
    settledRss,
    writesPerCr: written.length / N,
    writesBy,
    resyncWrites,
  };
}

async function main() {
  const goBin = buildGoComparator('go-memcached', 'the Go comparator (controller-runtime v0.25.2)');
  const bundle = join(root, 'dist/bench/compare-memcached/main.js');
  const { bundle: build } = (await import(join(root, 'tools/build/bundle.mjs'))) as { bundle: (e: string, o: string) => Promise<unknown> };
  await build(join(root, 'apps/memcached-operator/src/main.ts'), bundle);
  const node = process.env.OPKIT_BENCH_COMPARE_NODE === 'host' ? process.execPath : await imageNodeBinary();
  const nodeVersion = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  // Enough simulated nodes for the pods (110 each), at least 20.
  const plane = await startControlPlane({ nodes: Math.max(20, Math.ceil((N * SIZE) / 100)), audit: true });
  const runs: Run[] = [];
  // opkit once per node-flags variant, then Go: [label, command].
  const sides: [string, [string, string[]]][] = [];
  try {
    const transport = new Transport(plane.kubeConfig);
    const admin = new Client(transport, { fieldManager: 'bench' });
    // Both operators read and write v1beta1, the stored version: no conversion is ever called, and
    // opkit runs without its webhook server (the Go comparator has none).
    await plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify(MemcachedAPI.crd) });
    await waitFor('the CRD', () => admin.list(Memcached.kind).then(() => true));
    const kc = plane.kubeconfigPath;
    const go: [string, string[]] = [goBin, [`--kubeconfig=${kc}`, `--max-concurrent-reconciles=${WORKERS}`]];
    sides.push(
      ...nodeArgVariants().map((v): [string, [string, string[]]] => [
        `opkit${v ? ` ${v}` : ''}`,
        opkitCommand(node, bundle, kc, [`--max-concurrent-reconciles=${WORKERS}`], v),
      ]),
      ['go', go],
    );
    for (let r = 0; r < ROUNDS; r++) {
      for (const [i, [label, cmd]] of sides.entries()) {
        const run = await runOnce(plane, transport, label, r + 1, cmd, `run-${r}-${i}`);
        runs.push(run);
        console.log(`${label} run ${r + 1}: converged in ${run.converge.toFixed(1)} s; load ${loadavg()[0]!.toFixed(2)}`);
      }
    }
  } finally {
    await plane.stop();
  }
  const fmt = (x: number, d = 1) => x.toFixed(d);
  table(
    runs.map((r) => ({
      run: r.round,
      operator: r.operator,
      'first pass s': fmt(r.firstPass),
      'CPU s first pass': fmt(r.firstPassCpu, 2),
      'converge s': fmt(r.converge),
      'CPU s to converge': fmt(r.cpu, 2),
      'CPU s start + resync': fmt(r.resyncCpu, 2),
      'RSS MiB converged': fmt(r.rss),
      [`RSS MiB ${SETTLE_S} s later`]: fmt(r.settledRss),
      'writes / CR': fmt(r.writesPerCr, 2),
      'no-op resync writes': r.resyncWrites,
    })),
  );
  // Where the writes per CR come from, run by run.
  const kinds = [...new Set(runs.flatMap((r) => Object.keys(r.writesBy)))].sort();
  table(
    kinds.map((what) => ({
      'writes / CR': what,
      ...Object.fromEntries(runs.map((r) => [`${r.operator} (${r.round})`, fmt(r.writesBy[what] ?? 0, 2)])),
    })),
  );
  const of = (label: string, k: keyof Run) => median(runs.filter((r) => r.operator === label).map((r) => r[k] as number));
  const opkits = sides.map(([label]) => label).filter((l) => l !== 'go');
  table(
    (['firstPass', 'firstPassCpu', 'converge', 'cpu', 'resyncCpu', 'rss', 'settledRss', 'writesPerCr'] as const).map((k) => ({
      measure: k,
      ...Object.fromEntries(opkits.map((l) => [l, fmt(of(l, k), 2)])),
      go: fmt(of('go', k), 2),
      ...Object.fromEntries(opkits.map((l) => [`${l} / go`, fmt(of(l, k) / of('go', k), 2)])),
    })),
  );
  console.log(
    `${N} Memcacheds of size ${SIZE}, ${WORKERS} workers each, no client-side rate limit; opkit on Node ${nodeVersion}, ${allocatorOf(workspaceApp('memcached-operator').local.env)}; ${Math.max(20, Math.ceil((N * SIZE) / 100))} kwok nodes; load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  writeFileSync(join(root, 'dist/bench/compare-memcached/last.json'), JSON.stringify(runs, null, 1));
}

runBench(main);
