// ACME issuance against Pebble with real HTTP-01 validation: time per certificate, and what each
// certificate costs the CA (requests, by the operator's own certmanager_http_acme_client_request_count) and
// the API server (writes, by the audit log). The solver pods run as local processes behind the
// ingress stand-in, as in the integration tests.
//   OPKIT_BENCH_ACME_CERTS=1,20 (default)   certificates per run, all created at once
//   OPKIT_BENCH_ACME_NAMES=2 (default)      DNS names per certificate
import { metricSeries, metricValue, scrape } from '@opkit/runtime/testing';
import { freePort, startControlPlane, startIngressStandIn, startPebble, waitFor, workspaceApp } from '@opkit/testing';
import { existsSync } from 'node:fs';
import { table } from '../report.js';
import { startCertOperator } from './operator.js';
import { CERT_APIS } from '../../apps/cert-operator/src/api/index.js';

const { Certificate, Issuer } = CERT_APIS.opkit;

const SOLVER = workspaceApp('acme-solver');

async function run(n: number, names: number) {
  const plane = await startControlPlane({ nodes: 1, audit: true });
  const httpPort = await freePort();
  const standIn = await startIngressStandIn(plane.kubeConfig, { port: httpPort, images: { [SOLVER.image.repository]: SOLVER.local } });
  const pebble = await startPebble({ httpPort });
  try {
    // The production self-check (3 passes, 2 s apart) so the time per certificate is the real one.
    const { admin, manager } = await startCertOperator(plane, { selfCheckNameservers: [pebble.dnsServer], selfCheckPort: httpPort });
    await admin.create(Issuer.kind, {
      metadata: { name: 'acme', namespace: 'bench' },
      spec: {
        acme: {
          server: pebble.directoryUrl,
          caBundle: Buffer.from(pebble.tlsCaPem).toString('base64'),
          privateKeySecretRef: { name: 'acme-account' },
          solvers: [{ http01: { ingress: {} } }],
        },
      },
    });
    await waitFor(
      'the ACME issuer',
      async () => (await admin.get(Issuer.kind, { namespace: 'bench', name: 'acme' })).status?.conditions?.[0]?.status === 'True',
      { timeoutMs: 30_000 },
    );

    const requestsBefore = (await scrape(manager, '/metrics')).body;
    const validationsBefore = standIn.requests.length;
    const since = new Date();
    const t0 = performance.now();
    const createdAt = new Map<string, number>();
    await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const name = `c-${i}`;
        createdAt.set(name, performance.now());
        await admin.create(Certificate.kind, {
          metadata: { name, namespace: 'bench' },
          spec: {
            secretName: name,
            dnsNames: Array.from({ length: names }, (_, j) => `n${j}.c-${i}.bench.example.test`),
            issuerRef: { name: 'acme' },
            privateKey: { algorithm: 'ECDSA' },
          },
        });
      }),
    );
    const readyAt = new Map<string, number>();
    let lastReport = 0;
    await waitFor(
      `${n} Ready`,
      async () => {
        for (const c of await admin.listAll(Certificate.kind, { namespace: 'bench' })) {
          if (!readyAt.has(c.metadata.name!) && c.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True'))
            readyAt.set(c.metadata.name!, performance.now());
        }
        if (performance.now() - lastReport > 10_000) {
          lastReport = performance.now();
          console.log(`  ${readyAt.size}/${n} Ready after ${Math.round((lastReport - t0) / 1000)} s`);
        }
        return readyAt.size === n;
      },
      { timeoutMs: 900_000, intervalMs: 200 },
    );
    const seconds = (performance.now() - t0) / 1000;
    const latencies = [...readyAt].map(([name, at]) => (at - createdAt.get(name)!) / 1000).sort((a, b) => a - b);
    const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
    // Cleanup (challenge and solver deletion) finishes after Ready; let it land before counting.
    await new Promise((r) => setTimeout(r, 3_000));
    const metrics = (await scrape(manager, '/metrics')).body;
    const requests =
      metricValue(metrics, 'certmanager_http_acme_client_request_count') - metricValue(requestsBefore, 'certmanager_http_acme_client_request_count');
    const acmeBreakdown = [...acmeRequests(metrics)].map(([k, v]) => [k, v - (acmeRequests(requestsBefore).get(k) ?? 0)] as const).filter(([, v]) => v > 0);
    console.log(
      `  ACME requests per certificate: ${acmeBreakdown
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k} ${Math.round((v / n) * 10) / 10}`)
        .join(', ')}`,
    );
    const writes = plane.audit!.writes({ since }).filter((e) => e.userAgent?.startsWith('cert-operator/'));
    const breakdown = new Map<string, number>();
    for (const w of writes) {
      const k = `${w.verb} ${w.objectRef?.resource}${w.objectRef?.subresource ? `/${w.objectRef.subresource}` : ''}`;
      breakdown.set(k, (breakdown.get(k) ?? 0) + 1);
    }
    console.log(
      `  API writes per certificate: ${[...breakdown]
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k} ${Math.round((v / n) * 10) / 10}`)
        .join(', ')}`,
    );
    const validations = standIn.requests.slice(validationsBefore).filter((r) => r.fromCA).length;
    await manager.stop();
    const per = (x: number) => Math.round((x / n) * 10) / 10;
    return {
      certificates: n,
      'names each': names,
      'all Ready (s)': Math.round(seconds * 10) / 10,
      'p50 time/cert (s)': Math.round(pct(0.5) * 10) / 10,
      'p95 time/cert (s)': Math.round(pct(0.95) * 10) / 10,
      'ACME requests/cert': per(requests),
      'CA validations/cert': per(validations),
      'API writes/cert': per(writes.length),
    };
  } finally {
    await standIn.stop();
    await pebble.stop();
    await plane.stop();
  }
}

/** certmanager_http_acme_client_request_count by `METHOD path status`, from a metrics exposition. */
function acmeRequests(exposition: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const { labels: l, value } of metricSeries(exposition, 'certmanager_http_acme_client_request_count')) {
    const key = `${l.method} ${l.path} ${l.status}`;
    out.set(key, (out.get(key) ?? 0) + value);
  }
  return out;
}

async function main() {
  if (!existsSync(SOLVER.bundle)) throw new Error(`${SOLVER.bundle} is missing: run nx run @opkit/acme-solver:build first`);
  const sizes = (process.env.OPKIT_BENCH_ACME_CERTS ?? '1,20').split(',').map(Number);
  const names = Number(process.env.OPKIT_BENCH_ACME_NAMES ?? 2);
  const rows = [];
  for (const n of sizes) rows.push(await run(n, names));
  table(rows);
}
void main();
