// Issuance side by side: opkit's cert operator (in its own API mode, and in cert-manager mode on
// cert-manager's CRDs, as a drop-in replacement) and cert-manager's controller (v1.21.2, built
// here from its Go module: tools/control-plane/go/cert-manager), each as its own process against one API
// server that serves both API groups (cert-manager's CRDs from its module's deploy/crds). Each run
// makes, in a namespace of its own, a SelfSigned issuer, a CA Certificate, a CA issuer on it, then
// N ECDSA P-256 Certificates at once, and times them to Ready. Runs interleave (opkit, opkit in
// cert-manager mode, cert-manager, …); printed per run and as ratios to cert-manager, with the load
// average. Neither client is throttled: the API server's priority and fairness turns cert-manager's
// client limit off, and opkit has none.
//   OPKIT_BENCH_COMPARE_ISSUER=acme   instead, one ACME issuer on Pebble and N Certificates of one name
//     each over HTTP-01: both operators make their solver pods, Services and Ingresses (on simulated
//     nodes, kwok), the ingress stand-in routes Pebble's validations and the operators' self-checks
//     to them on port 80 (root), and answers each with the acme-solver's own server made from the
//     pod's args in the stand-in's process (a process per pod would cost the machine more than the
//     operators). Both take 60 challenges at once (their default).
//   OPKIT_BENCH_COMPARE_CERTS=1000   Certificates per run
//   OPKIT_BENCH_COMPARE_ROUNDS=2     rounds of runs (one per side each)
//   OPKIT_BENCH_COMPARE_SIDES=opkit,opkit-cm,cert-manager   the sides run, by slug
//   OPKIT_BENCH_COMPARE_DEADLINE_MIN=60   a run that has not finished by then is measured as it stands
//                                         (its Ready count, CPU and RSS), marked unfinished
//   OPKIT_BENCH_COMPARE_SETTLE_S=60   RSS is read when all are Ready, and again this long after (steady state)
//   OPKIT_BENCH_COMPARE_RENEW=1   then every certificate renewed at once, as `cmctl renew --all` does
//                                (an Issuing condition on each), timed to its next revision Ready
// Readiness is counted from one watch per run (./watched-count.ts), not by polling lists.
//   OPKIT_BENCH_NODE_ARGS='--max-semi-space-size=8'   node flags for opkit (V8 settings to try)
//   OPKIT_BENCH_OPERATOR_ENV='MALLOC_MMAP_THRESHOLD_=65536'   space-separated NAME=value for opkit,
//                                       over its image's environment (glibc's malloc settings to try)
//   OPKIT_BENCH_APISERVER_PPROF=<dir>   a CPU profile of kube-apiserver over each run's first 20 s of
//                                       issuance, written to <dir>/<namespace>.pprof (go tool pprof -top)
// Each opkit run's steady-state RSS is split by a Node diagnostic report (on SIGPWR): the V8 heap
// committed and live, and the external memory (Buffers) V8 is told of; the rest is malloc and code.
//   OPKIT_BENCH_HEAP_SNAPSHOT=<dir>     a V8 heap snapshot of each opkit run once all are Ready (after
//                                       its RSS is read), written to <dir> (Chrome DevTools' Memory tab)
import { Client, Namespace, Transport, defineKind, type Kind, type KubeObject } from '@opkit/runtime';
import { imageNodeBinary } from '@opkit/testing/containers';
import {
  CERT_MANAGER_ACME_CONTROLLERS,
  CERT_MANAGER_CA_CONTROLLERS,
  certManagerToolset,
  cmctlRenewConditions,
  findBinary,
  guardPid,
  kubectlApply,
  releasePid,
  startControlPlane,
  startLocalAcme,
  workspaceApp,
  workspaceRoot,
  WRITE_VERBS,
  type AuditEvent,
  type ControlPlane,
  type LocalAcme,
  type RoutedRequest,
} from '@opkit/testing';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CUSTOM_RESOURCES } from '../../apps/cert-operator/src/manifests/generate.js';
import { parseSolverArgs } from '../../apps/acme-solver/src/args.js';
import { createSolverServer } from '../../apps/acme-solver/src/server.js';
import { table, runBench } from '../report.js';
import { allocatorOf, cpuSeconds, descendantCpuSeconds, median, processMemory } from '../process-stats.js';
import { nodeArgVariants, opkitCommand } from './opkit-command.js';
import { requestsBy } from './requests-by.js';
import { watchedCount } from './watched-count.js';

type Conditioned = KubeObject & { status?: { conditions?: { type: string; status: string }[]; revision?: number } };

const N = Number(process.env.OPKIT_BENCH_COMPARE_CERTS ?? 1000);
const ROUNDS = Number(process.env.OPKIT_BENCH_COMPARE_ROUNDS ?? 2);
const DEADLINE_MIN = Number(process.env.OPKIT_BENCH_COMPARE_DEADLINE_MIN ?? 60);
const SETTLE_S = Number(process.env.OPKIT_BENCH_COMPARE_SETTLE_S ?? 60);
const ISSUER = (process.env.OPKIT_BENCH_COMPARE_ISSUER ?? 'ca') as 'ca' | 'acme';
if (!['ca', 'acme'].includes(ISSUER)) throw new Error(`OPKIT_BENCH_COMPARE_ISSUER is ca or acme, not ${ISSUER}`);
const RENEW = process.env.OPKIT_BENCH_COMPARE_RENEW === '1';
const root = workspaceRoot();
const SOLVER = workspaceApp('acme-solver');
const API_PROCESSES = ['kube-apiserver', 'etcd'];

interface Side {
  label: 'opkit' | 'opkit, cert-manager mode' | 'cert-manager';
  /** The runs' namespaces are named after it. */
  slug: string;
  group: string;
  userAgent: string;
  command(ns: string): [string, string[]];
}

interface Run {
  operator: string;
  round: number;
  /** Certificates Ready when the run ended: N, or fewer at the deadline. */
  ready: number;
  seconds: number;
  cpu: number;
  /** CPU the API server and etcd spent meanwhile: on two cores, what the operator's work leaves. */
  apiCpu: number;
  /** RSS when all are Ready, and after SETTLE_S idle. */
  rss: number;
  settledRss: number;
  /** That RSS split: the process's own memory (anonymous) and mapped files (the binary's code). */
  settledAnon: number;
  settledFile: number;
  /** opkit's memory after SETTLE_S idle as V8 sees it, in MiB; absent for cert-manager. */
  v8?: V8Memory;
  writesPerCert: number;
  /** Every request the operator made per certificate (reads and Events too), by what was asked. */
  requestsBy: Record<string, number>;
  /** ACME only: what the stand-in routed, per certificate. */
  http01?: { validations: number; selfChecks: number };
  /** With OPKIT_BENCH_COMPARE_RENEW=1: every certificate renewed at once, after the steady state. */
  renewal?: Renewal;
}

async function runOnce(plane: ControlPlane, transport: Transport, acme: LocalAcme | undefined, side: Side, ns: string, round: number): Promise<Run> {
  const admin = new Client(transport, { fieldManager: 'bench' });
  await admin.create(Namespace, { metadata: { name: ns } });
  const [cmd, args] = side.command(ns);
  let stderr = '';
  // opkit with the environment its image sets (apps/Dockerfile).
  const child: ChildProcess = spawn(cmd, args, {
    env: {
      ...process.env,
      ...(side.label !== 'cert-manager' ? OPKIT_ENV : {}),
      WATCH_NAMESPACE: ns,
      POD_NAMESPACE: ns,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // Ended with the bench, however it ends (a killed bench left its operator running).
  if (child.pid) guardPid(child.pid);
  child.on('exit', () => child.pid && releasePid(child.pid));
  child.stderr!.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  const v1 = `${side.group}/v1`;
  const apply = (items: object[]) => plane.kubectl(['apply', '-n', ns, '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }) });
  const kindOf = (kind: string, plural: string) => defineKind<Conditioned>({ group: side.group, version: 'v1', kind, plural, namespaced: true });
  const isReady = (o: Conditioned) => !!o.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
  const alive = () => {
    if (child.exitCode !== null) throw new Error(`${side.label} exited (${child.exitCode}): ${stderr}`);
  };
  const issuers = await watchedCount(transport, kindOf('Issuer', 'issuers'), ns, isReady);
  const certificates = await watchedCount(transport, kindOf('Certificate', 'certificates'), ns, isReady);
  const setup = acme ? acmeIssuer(v1, acme) : caIssuer(v1);
  await apply(setup.items);
  if (!(await issuers.until(setup.issuers, `${side.label}: issuers Ready`, { deadlineMs: 120_000, alive })).reached)
    throw new Error(`${side.label}: the ${ISSUER} issuer not Ready in 2 minutes`);
  await issuers.stop();
  const routed0 = acme?.standIn.requests.length ?? 0;
  const since = new Date();
  const cpu0 = cpuSeconds(child.pid!);
  const apiCpu0 = descendantCpuSeconds(API_PROCESSES);
  const t0 = performance.now();
  const pprof = apiServerProfile(plane, ns);
  const certs = Array.from({ length: N }, (_, i) => ({
    apiVersion: v1,
    kind: 'Certificate',
    metadata: { name: `c${i}` },
    // A name per run keeps each run's requests apart in the audit log and the stand-in's.
    spec: {
      secretName: `c${i}`,
      dnsNames: [`c${i}.${ns}.bench.example.test`],
      issuerRef: { name: setup.issuer },
      privateKey: { algorithm: 'ECDSA', size: 256 },
    },
  }));
  for (let i = 0; i < N; i += 250) await apply(certs.slice(i, i + 250));
  // The certificates Ready before the run (the CA's) are counted too.
  const done = await certificates.until(N + setup.certificates, `${side.label}: certificates Ready`, { deadlineMs: DEADLINE_MIN * 60_000, alive, since: t0 });
  await certificates.stop();
  const seconds = (performance.now() - t0) / 1000;
  await pprof;
  const cpu = cpuSeconds(child.pid!) - cpu0;
  const apiCpu = descendantCpuSeconds(API_PROCESSES) - apiCpu0;
  const rss = processMemory(child.pid!).rss / 2 ** 20;
  // Steady state: the operator idle for SETTLE_S (each runtime's collector returns what it no longer needs).
  await new Promise((r) => setTimeout(r, SETTLE_S * 1000));
  alive();
  const settled = processMemory(child.pid!);
  const settledRss = settled.rss / 2 ** 20;
  const v8 = side.label !== 'cert-manager' ? await v8Memory(child) : undefined;
  if (side.label !== 'cert-manager') await heapSnapshot(child);
  const ours = (e: AuditEvent) => (e.userAgent ?? '').startsWith(side.userAgent) && (e.objectRef?.namespace ?? ns) === ns;
  const requests = plane.audit!.query({ since }).filter(ours);
  const isWrite = (e: AuditEvent) => WRITE_VERBS.includes(e.verb) && e.objectRef?.namespace === ns && e.objectRef?.resource !== 'events';
  const writes = requests.filter(isWrite).length;
  // Read before a renewal adds its own.
  const http01 = acme ? http01Requests(acme.standIn.requests.slice(routed0), N) : undefined;
  const renewal = RENEW
    ? await renewAll(
        transport,
        kindOf('Certificate', 'certificates'),
        side,
        ns,
        child,
        alive,
        (from) => plane.audit!.query({ since: from }).filter(ours).filter(isWrite).length,
      )
    : undefined;
  child.kill('SIGTERM');
  await new Promise((r) => child.on('exit', r));
  await plane.kubectl(['delete', 'namespace', ns, '--wait=false']);
  return {
    operator: side.label,
    round,
    ready: done.count - setup.certificates,
    seconds,
    cpu,
    apiCpu,
    rss,
    settledRss,
    settledAnon: settled.anon / 2 ** 20,
    settledFile: settled.file / 2 ** 20,
    v8,
    writesPerCert: writes / N,
    requestsBy: requestsBy(requests, N),
    http01,
    renewal,
  };
}

interface Renewal {
  /** Certificates renewed (a new revision, Ready) when the renewal ended: N, or fewer at the deadline. */
  renewed: number;
  seconds: number;
  cpu: number;
  apiCpu: number;
  /** RSS when all are renewed. */
  rss: number;
  writesPerCert: number;
}

/**
 * Every Certificate renewed at once, as `cmctl renew --all` does it (an Issuing condition on each
 * status, which cert-manager and opkit in either API mode act on), timed until each has its next
 * revision and is Ready. The bench writes the conditions 16 at a time; its own writes are not the
 * operator's and are not counted.
 */
async function renewAll(
  transport: Transport,
  Certificate: Kind<Conditioned>,
  side: Side,
  ns: string,
  child: ChildProcess,
  alive: () => void,
  writesSince: (since: Date) => number,
): Promise<Renewal> {
  const admin = new Client(transport, { fieldManager: 'cmctl' });
  // The run's certificates (c0, c1, …), not the CA's.
  const issued = (await admin.listAll(Certificate, { namespace: ns })).filter((c) => c.metadata.name!.startsWith('c'));
  const revision = new Map(issued.map((c) => [c.metadata.name!, c.status?.revision ?? 0]));
  const renewed = await watchedCount(
    transport,
    Certificate,
    ns,
    (c) =>
      (c.status?.revision ?? 0) > (revision.get(c.metadata.name!) ?? Infinity) &&
      !!c.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True') &&
      !c.status.conditions.some((x) => x.type === 'Issuing' && x.status === 'True'),
  );
  const since = new Date();
  const cpu0 = cpuSeconds(child.pid!);
  const apiCpu0 = descendantCpuSeconds(API_PROCESSES);
  const t0 = performance.now();
  const queue = [...issued];
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let c = queue.shift(); c; c = queue.shift()) {
        await admin.patchStatus(Certificate, { namespace: ns, name: c.metadata.name! }, { status: { conditions: cmctlRenewConditions(c.status?.conditions) } });
      }
    }),
  );
  const done = await renewed.until(issued.length, `${side.label}: certificates renewed`, { deadlineMs: DEADLINE_MIN * 60_000, alive, since: t0 });
  await renewed.stop();
  const seconds = (performance.now() - t0) / 1000;
  return {
    renewed: done.count,
    seconds,
    cpu: cpuSeconds(child.pid!) - cpu0,
    apiCpu: descendantCpuSeconds(API_PROCESSES) - apiCpu0,
    rss: processMemory(child.pid!).rss / 2 ** 20,
    writesPerCert: writesSince(since) / issued.length,
  };
}

/** A SelfSigned issuer, a CA Certificate on it, and a CA issuer on that: two issuers and one Certificate Ready before the run. */
function caIssuer(v1: string) {
  return {
    items: [
      { apiVersion: v1, kind: 'Issuer', metadata: { name: 'selfsigned' }, spec: { selfSigned: {} } },
      {
        apiVersion: v1,
        kind: 'Certificate',
        metadata: { name: 'root' },
        spec: {
          secretName: 'root',
          isCA: true,
          commonName: 'bench root',
          duration: '8760h',
          issuerRef: { name: 'selfsigned' },
          privateKey: { algorithm: 'ECDSA', size: 256 },
        },
      },
      { apiVersion: v1, kind: 'Issuer', metadata: { name: 'ca' }, spec: { ca: { secretName: 'root' } } },
    ],
    issuer: 'ca',
    issuers: 2,
    certificates: 1,
  };
}

/** One ACME issuer on Pebble, solving HTTP-01 through Ingresses of the class the stand-in serves. */
function acmeIssuer(v1: string, acme: LocalAcme) {
  return {
    items: [
      {
        apiVersion: v1,
        kind: 'Issuer',
        metadata: { name: 'acme' },
        spec: acme.issuerSpec('acme-account'),
      },
    ],
    issuer: 'acme',
    issuers: 1,
    certificates: 0,
  };
}

/** HTTP-01 requests per certificate the stand-in routed during a run: the CA's validations, and the rest (the operator's self-checks). */
function http01Requests(requests: RoutedRequest[], n: number) {
  const validations = requests.filter((r) => r.fromCA).length;
  return { validations: validations / n, selfChecks: (requests.length - validations) / n };
}

/** The acme-solver's own server, from a solver pod's args read as the solver reads them (cert-manager's pods pass the same). */
function solverFromArgs(args: string[]) {
  const parsed = parseSolverArgs(args);
  if (parsed.help) throw new Error(`a solver pod asked for the solver's usage: ${args.join(' ')}`);
  return createSolverServer(parsed.solver);
}

const OPERATOR_ENV = Object.fromEntries(
  (process.env.OPKIT_BENCH_OPERATOR_ENV ?? '')
    .split(' ')
    .filter(Boolean)
    .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
);
/** opkit's environment: its image's (apps/Dockerfile), with the bench's settings over it. */
const OPKIT_ENV = { ...workspaceApp('cert-operator').local.env, ...OPERATOR_ENV };
const HEAP_DIR = process.env.OPKIT_BENCH_HEAP_SNAPSHOT;
const REPORT_DIR = mkdtempSync(join(tmpdir(), 'opkit-bench-report-'));
/** Node's flags for a heap snapshot on SIGUSR2, into HEAP_DIR, and a diagnostic report on SIGPWR. */
const heapArgs = [
  HEAP_DIR ? `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${HEAP_DIR}` : '',
  `--report-on-signal --report-signal=SIGPWR --report-directory=${REPORT_DIR}`,
].join(' ');

interface V8Memory {
  /** The V8 heap's committed pages, and what is live on them (as of the last collection). */
  heapCommitted: number;
  heapUsed: number;
  /** Memory outside the heap that V8 is told of: Buffers, ArrayBuffers. */
  external: number;
}

/**
 * Signals the operator for a file Node writes into `dir` (a report, a heap snapshot), then polls
 * every `everyMs` until `done` says the new file (undefined until it appears) is complete.
 */
async function signalForFile<T>(
  child: ChildProcess,
  signal: NodeJS.Signals,
  dir: string,
  suffix: string,
  everyMs: number,
  done: (path: string | undefined) => T | undefined,
): Promise<T> {
  const before = new Set(readdirSync(dir));
  child.kill(signal);
  for (;;) {
    await new Promise((r) => setTimeout(r, everyMs));
    const file = readdirSync(dir).find((f) => f.endsWith(suffix) && !before.has(f));
    const result = done(file && join(dir, file));
    if (result !== undefined) return result;
  }
}

/** Asks the operator for a diagnostic report and reads the V8 heap's figures from it (given up after 15 s). */
async function v8Memory(child: ChildProcess): Promise<V8Memory | undefined> {
  let tries = 0;
  const memory = await signalForFile(child, 'SIGPWR', REPORT_DIR, '.json', 500, (path) => {
    if (++tries > 30) return null;
    if (!path) return undefined;
    try {
      type Space = { committedMemory: number; used: number };
      const heap = (JSON.parse(readFileSync(path, 'utf8')) as { javascriptHeap: Record<string, number> & { heapSpaces: Record<string, Space> } })
        .javascriptHeap;
      const mib = (k: string) => heap[k]! / 2 ** 20;
      // Where the committed heap is, space by space, and what V8 itself holds in malloc.
      const spaces = Object.entries(heap.heapSpaces)
        .filter(([, sp]) => sp.committedMemory >= 2 ** 20)
        .map(([name, sp]) => `${name} ${(sp.committedMemory / 2 ** 20).toFixed(1)}/${(sp.used / 2 ** 20).toFixed(1)}`);
      console.log(
        `opkit's V8 heap, committed/used MiB by space: ${spaces.join(', ')}; V8's malloc ${mib('mallocedMemory').toFixed(1)} (peak ${mib('peakMallocedMemory').toFixed(1)})`,
      );
      return { heapCommitted: mib('totalCommittedMemory'), heapUsed: mib('usedMemory'), external: mib('externalMemory') };
    } catch {
      return undefined; // still being written
    }
  });
  return memory ?? undefined;
}

/** Asks the operator for a heap snapshot and waits until it is written (its size steady for 3 s). */
async function heapSnapshot(child: ChildProcess): Promise<void> {
  if (!HEAP_DIR) return;
  let last = -1;
  let steady = 0;
  await signalForFile(child, 'SIGUSR2', HEAP_DIR, '.heapsnapshot', 1_000, (path) => {
    const size = path ? statSync(path).size : -1;
    steady = size > 0 && size === last ? steady + 1 : 0;
    last = size;
    return steady >= 3 || undefined;
  });
  console.log(`heap snapshot of ${child.pid}: ${(last / 2 ** 20).toFixed(0)} MiB in ${HEAP_DIR}`);
}

/** Where kube-apiserver spends its CPU while a side issues: its own profiler, over the admin's connection. */
async function apiServerProfile(plane: ControlPlane, ns: string): Promise<void> {
  const dir = process.env.OPKIT_BENCH_APISERVER_PPROF;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  const out = openSync(join(dir, `${ns}.pprof`), 'w');
  const kubectl = spawn(findBinary('kubectl'), [`--kubeconfig=${plane.kubeconfigPath}`, 'get', '--raw', '/debug/pprof/profile?seconds=20'], {
    stdio: ['ignore', out, 'inherit'],
  });
  await new Promise((r) => kubectl.on('exit', r));
  closeSync(out);
}

async function main() {
  const certManager = await certManagerToolset();
  const cmBin = certManager.binary;
  const bundle = join(root, 'dist/bench/compare-cert-operator/main.js');
  const { bundle: build } = (await import(join(root, 'tools/build/bundle.mjs'))) as { bundle: (e: string, o: string) => Promise<unknown> };
  await build(join(root, 'apps/cert-operator/src/main.ts'), bundle);
  const node = await imageNodeBinary();
  const nodeVersion = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  // Profiling is off in the test API servers; on only when a profile is asked for.
  // ACME: simulated nodes for the solver pods (kwok), and the controller manager to collect them.
  const plane = await startControlPlane({
    audit: true,
    nodes: ISSUER === 'acme' ? 2 : 0,
    apiServerArgs: process.env.OPKIT_BENCH_APISERVER_PPROF ? ['--profiling=true'] : [],
  });
  const runs: Run[] = [];
  let acme: LocalAcme | undefined;
  try {
    // cert-manager's self-check speaks to port 80 and cannot be told another.
    if (ISSUER === 'acme') acme = await startLocalAcme(plane.kubeConfig, { [SOLVER.image.repository]: { inProcess: solverFromArgs } }, 'nginx', 80);
    const solverImage = `${SOLVER.image.repository}:${SOLVER.image.tag}`;
    // The binary built here runs the CA controllers unless told (its main.go); ACME adds its three.
    const cmControllers = [...CERT_MANAGER_CA_CONTROLLERS, ...(acme ? CERT_MANAGER_ACME_CONTROLLERS : [])].join(',');
    const acmeArgs = acme ? [`--acme-http01-solver-image=${solverImage}`, `--acme-http01-solver-nameservers=${acme.pebble.dnsServer}`] : [];
    const transport = new Transport(plane.kubeConfig);
    // cert-manager's CRDs, as its module ships them.
    await kubectlApply(plane.kubeconfigPath, certManager.crds);

    await kubectlApply(plane.kubeconfigPath, CUSTOM_RESOURCES.map((r) => JSON.stringify(r.crd)).join('\n---\n'));
    await plane.kubectl(['wait', '--for=condition=Established', 'crd', '--all', '--timeout=60s']);
    const kc = plane.kubeconfigPath;
    if (HEAP_DIR) mkdirSync(HEAP_DIR, { recursive: true });
    const opkit = (ns: string, extra: string[] = []) =>
      opkitCommand(node, bundle, kc, [`--cluster-resource-namespace=${ns}`, ...acmeArgs, ...extra], `${nodeArgVariants()[0]} ${heapArgs}`);
    const sides: Side[] = [
      { label: 'opkit', slug: 'opkit', group: 'cert.opkit.dev', userAgent: 'cert-operator/', command: (ns) => opkit(ns) },
      // The same objects as cert-manager's side, on its CRDs: opkit as a drop-in replacement.
      {
        label: 'opkit, cert-manager mode',
        slug: 'opkit-cm',
        group: 'cert-manager.io',
        userAgent: 'cert-operator/',
        command: (ns) => opkit(ns, ['--api-mode=cert-manager', `--cert-manager-lease-namespace=${ns}`]),
      },
      {
        label: 'cert-manager',
        slug: 'cert-manager',
        group: 'cert-manager.io',
        userAgent: 'cert-manager',
        command: (ns) => [
          cmBin,
          [`--kubeconfig=${kc}`, `--namespace=${ns}`, `--cluster-resource-namespace=${ns}`, `--controllers=${cmControllers}`, ...acmeArgs],
        ],
      },
    ];
    const wanted = (process.env.OPKIT_BENCH_COMPARE_SIDES ?? 'opkit,opkit-cm,cert-manager').split(',');
    sides.splice(0, sides.length, ...sides.filter((s) => wanted.includes(s.slug)));
    for (let r = 0; r < ROUNDS; r++) {
      for (const side of sides) {
        const run = await runOnce(plane, transport, acme, side, `${side.slug}-${r}`, r + 1);
        runs.push(run);
        console.log(
          `${side.label} run ${r + 1}: ${run.ready === N ? `${N} certificates Ready` : `UNFINISHED, ${run.ready} of ${N} Ready`} in ${run.seconds.toFixed(1)} s; load ${loadavg()[0]!.toFixed(2)}`,
        );
      }
    }
  } finally {
    await acme?.stop();
    await plane.stop();
  }
  const fmt = (x: number, d = 1) => x.toFixed(d);
  table(
    runs.map((r) => ({
      run: r.round,
      operator: r.operator,
      Ready: r.ready === N ? 'all' : `${r.ready} (unfinished)`,
      s: fmt(r.seconds),
      'certificates/s': fmt(r.ready / r.seconds),
      'CPU s': fmt(r.cpu, 2),
      'API server + etcd CPU s': fmt(r.apiCpu, 2),
      'RSS MiB at Ready': fmt(r.rss),
      [`RSS MiB ${SETTLE_S} s later`]: fmt(r.settledRss),
      'of which anonymous / files': `${fmt(r.settledAnon)} / ${fmt(r.settledFile)}`,
      'V8 heap committed / used / external': r.v8 ? `${fmt(r.v8.heapCommitted)} / ${fmt(r.v8.heapUsed)} / ${fmt(r.v8.external)}` : '',
      'writes / certificate': fmt(r.writesPerCert, 2),
      ...(r.http01 ? { 'HTTP-01 validations / self-checks per certificate': `${fmt(r.http01.validations, 2)} / ${fmt(r.http01.selfChecks, 2)}` } : {}),
    })),
  );
  const renewals = runs.filter((r) => r.renewal);
  if (renewals.length)
    table(
      renewals.map(({ round, operator, renewal: w }) => ({
        run: round,
        operator,
        renewed: w!.renewed === N ? 'all' : `${w!.renewed} (unfinished)`,
        s: fmt(w!.seconds),
        'renewals/s': fmt(w!.renewed / w!.seconds),
        'CPU s': fmt(w!.cpu, 2),
        'API server + etcd CPU s': fmt(w!.apiCpu, 2),
        'RSS MiB at the end': fmt(w!.rss),
        'writes / renewal': fmt(w!.writesPerCert, 2),
      })),
    );
  // Where the API server's work comes from: every request per certificate, run by run.
  const asked = [...new Set(runs.flatMap((r) => Object.keys(r.requestsBy)))].sort();
  table(
    asked.map((what) => ({
      'requests / certificate': what,
      ...Object.fromEntries(runs.map((r) => [`${r.operator} (${r.round})`, fmt(r.requestsBy[what] ?? 0, 2)])),
    })),
  );
  const of = (label: string, k: keyof Run) => median(runs.filter((r) => r.operator === label).map((r) => r[k] as number));
  // Medians per side run, and each opkit side's ratio to cert-manager's.
  const labels = [...new Set(runs.map((r) => r.operator))];
  table(
    (['ready', 'seconds', 'cpu', 'apiCpu', 'rss', 'settledRss', 'writesPerCert'] as const).map((k) => ({
      measure: k,
      ...Object.fromEntries(labels.map((l) => [l, fmt(of(l, k), 2)])),
      ...Object.fromEntries(
        labels
          .filter((l) => l !== 'cert-manager' && labels.includes('cert-manager'))
          .map((l) => [`ratio ${l}/cert-manager`, fmt(of(l, k) / of('cert-manager', k), 2)]),
      ),
    })),
  );
  console.log(
    `${N} ECDSA P-256 certificates from ${ISSUER === 'acme' ? 'an ACME issuer (Pebble, HTTP-01)' : 'a CA issuer'} per run; opkit on Node ${nodeVersion}, ${allocatorOf(OPKIT_ENV)}${
      process.env.OPKIT_BENCH_OPERATOR_ENV ? ` with ${process.env.OPKIT_BENCH_OPERATOR_ENV}` : ''
    }${nodeArgVariants()[0] ? ` ${nodeArgVariants()[0]}` : ''}; load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
}

runBench(main);
