// The operators under faults for longer than the test command allows: each operator's fault scenario
// (the same one its faults.int.test.ts runs for 20 s) churned for minutes per seed, two replicas
// each behind a fault-injecting proxy. Prints, per run, the faults injected, the invariant checks,
// the convergence time once the faults stop, the writes and the worst event-loop lag.
//   OPKIT_FAULT_SEEDS=1,2,3 (default)        seeds; a failing one replays with its test's command
//   OPKIT_FAULT_CHURN_MS=120000 (default)    how long each run churns under faults
//   OPKIT_SOAK_OPERATORS=memcached,cdn,cert  which operators (default all)
import { Client, CustomResourceDefinition, Transport } from '@opkit/runtime';
import { assertFaultInvariants, faultSeeds, runUnderFaults, type FaultRunReport, type FaultScenario } from '@opkit/runtime/testing/faults';
import { freePort, startControlPlane, startIngressStandIn, startPebble, waitFor, workspaceApp, type ControlPlane } from '@opkit/testing';
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { cdnFaultScenario } from '../../apps/cdn-operator/src/controllers/cdncluster/fault-scenario.js';
import { certFaultScenario, FAULTS_SYSTEM_NAMESPACE } from '../../apps/cert-operator/src/controllers/fault-scenario.js';
import { CUSTOM_RESOURCES } from '../../apps/cert-operator/src/manifests/generate.js';
import { memcachedFaultScenario } from '../../apps/memcached-operator/src/controllers/memcached/fault-scenario.js';
import { table } from '../report.js';
import { CERT_APIS } from '../../apps/cert-operator/src/api/index.js';

const { Certificate } = CERT_APIS.opkit;

process.env['OPKIT_FAULT_CHURN_MS'] ??= '120000';
const seeds = faultSeeds([1, 2, 3]);
const only = (process.env['OPKIT_SOAK_OPERATORS'] ?? 'memcached,cdn,cert').split(',');
const TEST = {
  memcached: 'apps/memcached-operator/src/controllers/memcached/faults.int.test.ts',
  cdn: 'apps/cdn-operator/src/controllers/cdncluster/faults.int.test.ts',
  cert: 'apps/cert-operator/src/controllers/faults.int.test.ts',
};
type Operator = keyof typeof TEST;
const CHECKS = ['converged', 'only the leader wrote', 'writes per object per minute', 'faults on every replica'];

interface Setup {
  plane: ControlPlane;
  scenario(ns: string): Promise<FaultScenario>;
  stop(): Promise<void>;
}

async function setUp(op: Operator): Promise<Setup> {
  if (op === 'memcached') {
    const plane = await startControlPlane({ nodes: 2, audit: true });
    return { plane, scenario: (ns) => memcachedFaultScenario(plane, ns), stop: () => plane.stop() };
  }
  if (op === 'cdn') {
    const plane = await startControlPlane({ nodes: 2, audit: true });
    return { plane, scenario: (ns) => cdnFaultScenario(plane, ns), stop: () => plane.stop() };
  }
  const solver = workspaceApp('acme-solver');
  if (!existsSync(solver.bundle)) throw new Error(`${solver.bundle} is missing: build it first (nx run @opkit/acme-solver:build)`);
  const plane = await startControlPlane({ nodes: 1, audit: true });
  const admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
  for (const r of CUSTOM_RESOURCES) await admin.create(CustomResourceDefinition, r.crd as never);
  await waitFor('CRDs served', () => admin.list(Certificate.kind).then(() => true));
  await plane.kubectl(['create', 'namespace', FAULTS_SYSTEM_NAMESPACE]);
  const httpPort = await freePort();
  const standIn = await startIngressStandIn(plane.kubeConfig, { port: httpPort, images: { [solver.image.repository]: solver.local }, ingressClass: 'nginx' });
  const pebble = await startPebble({ httpPort });
  return {
    plane,
    scenario: (ns) => certFaultScenario(plane, ns, { pebble, httpPort }),
    stop: async () => {
      await standIn.stop();
      await pebble.stop();
      await plane.stop();
    },
  };
}

async function main() {
  const rows: Record<string, string | number>[] = [];
  const failures: string[] = [];
  const started = performance.now();
  console.log(
    `churn ${Number(process.env['OPKIT_FAULT_CHURN_MS']) / 1000} s per run, seeds ${seeds.join(', ')}, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  for (const op of Object.keys(TEST) as Operator[]) {
    if (!only.includes(op)) continue;
    const setup = await setUp(op);
    try {
      for (const seed of seeds) {
        const [dir, file] = TEST[op].split('/src/') as [string, string];
        const replay = `cd ${dir} && OPKIT_FAULT_SEEDS=${seed} OPKIT_FAULT_CHURN_MS=${process.env['OPKIT_FAULT_CHURN_MS']} npx vitest run src/${file}`;
        const scenario = await setup.scenario(`soak-${seed}`);
        let report: FaultRunReport | undefined;
        let broken = '';
        try {
          report = await runUnderFaults({ ...scenario.run, plane: setup.plane, seed }, replay);
          assertFaultInvariants(report, scenario, replay);
        } catch (err) {
          broken = (err as Error).message.split('\n')[0]!;
          failures.push(`${op} seed ${seed}: ${(err as Error).message}`);
        }
        const requests = report?.injected.reduce((n, s) => n + s.requests, 0) ?? 0;
        const injected = report?.injected.reduce((n, s) => n + s.injected, 0) ?? 0;
        rows.push({
          operator: op,
          seed,
          'requests / faults': report ? `${requests} / ${injected}` : '—',
          'invariant checks': broken ? `failed: ${broken.slice(0, 80)}` : `${CHECKS.length} of ${CHECKS.length}`,
          'converged ms after faults': report?.convergedMs ?? '—',
          writes: report?.writes ?? '—',
          'worst writes/object/min (bound)': report ? `${report.burst.writes} (${scenario.maxWritesPerObjectPerMinute})` : '—',
          'worst event-loop lag ms': report?.lagMaxMs ?? '—',
        });
      }
    } finally {
      await setup.stop();
    }
  }
  table(rows);
  const reports = rows.filter((r) => typeof r['converged ms after faults'] === 'number');
  console.log(
    `\n${rows.length} runs in ${Math.round((performance.now() - started) / 1000)} s; ${CHECKS.length * rows.length} invariant checks (${CHECKS.join(', ')}), ${failures.length} runs broke one`,
  );
  if (reports.length)
    console.log(
      `worst convergence ${Math.max(...reports.map((r) => r['converged ms after faults'] as number))} ms; worst event-loop lag ${Math.max(...reports.map((r) => r['worst event-loop lag ms'] as number))} ms; load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
  for (const f of failures) console.log(`\n${f}`);
}

void main();
