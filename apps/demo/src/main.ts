// npm run demo: a simulated cluster on this machine, the three operators installed with their
// Helm charts (each running from its built bundle as its chart's ServiceAccount), the samples
// applied, and their status shown live until Ctrl-C.
//   --exit-when-ready   stop once everything has converged (exit 0), or fail after --timeout
//   --timeout=<s>       how long to wait for convergence with --exit-when-ready (default 300)
import {
  findBinary,
  helmInstall,
  startLocalAcme,
  startLocalCluster,
  workspaceApp,
  workspaceRoot,
  type LocalAcme,
  type LocalCluster,
  type Release,
} from '@opkit/testing';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { converged, statusReader } from './status.js';
import { changes, indexRows, renderTable, type Row } from './table.js';

const { values: flags } = parseArgs({ options: { 'exit-when-ready': { type: 'boolean', default: false }, timeout: { type: 'string', default: '300' } } });
const root = workspaceRoot();
const SYSTEM = 'opkit-system';
const DEMO = 'demo';
const started = Date.now();
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)}s`;
const say = (msg: string) => console.log(`[${elapsed()}] ${msg}`);
const tty = process.stdout.isTTY;

const [memcached, cdn, cert, solver] = [
  workspaceApp('memcached-operator', root),
  workspaceApp('cdn-operator', root),
  workspaceApp('cert-operator', root),
  workspaceApp('acme-solver', root),
];
const releases: Release[] = [
  { release: 'memcached', namespace: SYSTEM, app: memcached },
  { release: 'cdn', namespace: SYSTEM, app: cdn },
  { release: 'cert', namespace: SYSTEM, app: cert },
];
const sample = (path: string) => readFileSync(join(root, path), 'utf8');

let cluster: LocalCluster | undefined;
let acme: LocalAcme | undefined;
let stopping = 0;

async function shutdown(code: number) {
  if (stopping) return;
  stopping = Date.now();
  say('stopping: the operators, Pebble, the simulated cluster…');
  await acme?.stop().catch(() => undefined);
  await cluster?.stop().catch(() => undefined);
  say('stopped; nothing is left running');
  process.exit(code);
}
// A second Ctrl-C forces the exit; the same one delivered twice (terminal and run-ts) does not.
process.on('SIGINT', () => (stopping && Date.now() - stopping > 2_000 ? process.exit(130) : void shutdown(0)));
process.on('SIGTERM', () => void shutdown(0));

async function main() {
  say('starting a simulated cluster: etcd, kube-apiserver, controller-manager, scheduler and 3 kwok nodes…');
  cluster = await startLocalCluster({ apps: [memcached, cdn, cert], nodes: 3 });
  say(`cluster up; kubeconfig: ${cluster.kubeconfigPath}`);
  say('starting Pebble (an ACME test CA) and the ingress stand-in that routes its HTTP-01 validations…');
  acme = await startLocalAcme(cluster.kubeConfig, { [solver.image.repository]: solver.local });

  for (const r of releases) {
    say(`helm install ${r.release} charts/${r.app.app} --namespace ${SYSTEM}`);
    await helmInstall(cluster, r, r.app === cert ? acme.chartValues : {});
  }

  await cluster.kubectl(['create', 'namespace', DEMO]);
  const apply = (input: string) => cluster!.kubectl(['apply', '-n', DEMO, '-f', '-'], { input });
  say('applying the samples: a Memcached, three CdnClusters (the balancer before its sources), a private CA chain, an ACME certificate');
  await apply(sample('apps/memcached-operator/examples/memcached.yaml'));
  await apply(sample('apps/cdn-operator/examples/cdnclusters.yaml'));
  await apply(sample('apps/cert-operator/examples/ca-issuer.yaml'));
  await apply(
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        {
          apiVersion: 'cert.opkit.dev/v1',
          kind: 'Issuer',
          metadata: { name: 'pebble' },
          spec: {
            acme: {
              server: acme.pebble.directoryUrl,
              email: 'demo@example.test',
              caBundle: Buffer.from(acme.pebble.tlsCaPem).toString('base64'),
              privateKeySecretRef: { name: 'pebble-account' },
              solvers: [{ http01: { ingress: { ingressClassName: acme.ingressClass } } }],
            },
          },
        },
        {
          apiVersion: 'cert.opkit.dev/v1',
          kind: 'Certificate',
          metadata: { name: 'shop' },
          spec: { secretName: 'shop-tls', dnsNames: ['shop.demo.test', 'www.shop.demo.test'], issuerRef: { name: 'pebble' } },
        },
      ],
    }),
  );

  const read = statusReader(cluster.kubeConfig, releases, () => cluster!.runner.pods());
  const kubectl = findBinary('kubectl');
  const hint = [
    `kubeconfig: ${cluster.kubeconfigPath}; in another terminal:`,
    `  export KUBECONFIG=${cluster.kubeconfigPath}`,
    `  ${kubectl} get mc,cdn,certificates,issuers -A`,
    `  kubectl logs is not available (no kubelet): the operators' logs are in ${join(cluster.plane.dir, 'pods')}`,
  ].join('\n');
  let before = new Map<string, Row>();
  let convergedAt: number | undefined;
  let announced = false;
  const deadline = Date.now() + Number(flags.timeout) * 1000;
  while (!stopping) {
    const rows = await read().catch(() => [] as Row[]);
    if (!convergedAt && converged(rows)) convergedAt = Date.now();
    if (tty) {
      const title = convergedAt
        ? `All samples converged in ${((convergedAt - started) / 1000).toFixed(1)}s. Ctrl-C stops everything.`
        : `Converging… (${elapsed()})  Ctrl-C stops everything.`;
      process.stdout.write(`\x1b[H\x1b[2J${title}\n\n${renderTable(rows, process.stdout.columns || 160)}\n\n${hint}\n`);
    } else {
      const { changed, gone } = changes(before, rows);
      for (const r of changed) say(`${r.kind} ${r.name}: ${r.status}${r.detail ? ` (${r.detail})` : ''}`);
      for (const g of gone) say(`${g}: gone`);
      if (convergedAt && !announced) {
        announced = true;
        say(`all samples converged\n${renderTable(rows)}\n${hint}`);
      }
    }
    before = indexRows(rows);
    if (flags['exit-when-ready'] && convergedAt) return shutdown(0);
    if (flags['exit-when-ready'] && Date.now() > deadline) {
      say(`not converged after ${flags.timeout}s:\n${renderTable(rows)}`);
      return shutdown(1);
    }
    await new Promise((r) => setTimeout(r, 1_000));
  }
}

main().catch(async (err: Error) => {
  console.error(`demo failed: ${err.message}`);
  await shutdown(1);
});
