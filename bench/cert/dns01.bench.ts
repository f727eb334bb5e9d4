// ACME DNS-01 with RFC 2136 against Pebble resolving through BIND 9: for wildcard certificates
// (*.zone and zone, two authorizations), the ACME requests per certificate (the operator's
// certmanager_http_acme_client_request_count), the DNS UPDATEs per certificate (BIND's log), and the time to
// Ready with the production self-check settings: every 10 s, the TXT record asked of the zone's
// authoritative server found by its NS record, on port 53 (where this runs as root).
//   OPKIT_BENCH_DNS01_CERTS=1,10 (default)   certificates per run, all created at once
import { metricValue, scrape } from '@opkit/runtime/testing';
import { bindUnavailable, startBind, startControlPlane, startPebble, waitFor } from '@opkit/testing';
import { loadavg } from 'node:os';
import { table, runBench } from '../report.js';
import { startCertOperator } from './operator.js';
import { CERT_APIS } from '../../apps/cert-operator/src/api/index.js';

const { Certificate, Issuer } = CERT_APIS.opkit;

async function run(n: number) {
  const bind = await startBind({ zone: 'example.test', onPort53: true });
  const pebble = await startPebble({ resolver: bind.server });
  const plane = await startControlPlane();
  try {
    // Production settings; BIND plays the recursive resolver on its test port too.
    const { admin, manager } = await startCertOperator(plane, {
      dns01: { recursiveNameservers: [bind.server], recursiveOnly: !bind.authoritative, checkIntervalMs: 10_000 },
    });
    await plane.kubectl(['create', 'secret', 'generic', 'tsig', '-n', 'bench', `--from-literal=secret=${bind.tsig.secret}`]);
    await admin.create(Issuer.kind, {
      metadata: { name: 'acme', namespace: 'bench' },
      spec: {
        acme: {
          server: pebble.directoryUrl,
          caBundle: Buffer.from(pebble.tlsCaPem).toString('base64'),
          privateKeySecretRef: { name: 'acme-account' },
          solvers: [
            {
              dns01: {
                rfc2136: {
                  nameserver: bind.server,
                  tsigKeyName: bind.tsig.name,
                  tsigAlgorithm: 'HMACSHA256',
                  tsigSecretSecretRef: { name: 'tsig', key: 'secret' },
                },
              },
            },
          ],
        },
      },
    });
    await waitFor(
      'the ACME issuer',
      async () => (await admin.get(Issuer.kind, { namespace: 'bench', name: 'acme' })).status?.conditions?.[0]?.status === 'True',
      { timeoutMs: 30_000 },
    );
    const requestsBefore = metricValue((await scrape(manager, '/metrics')).body, 'certmanager_http_acme_client_request_count');
    const updatesBefore = bind.updates();
    const t0 = performance.now();
    const ready = new Map<string, number>();
    await Promise.all(
      Array.from({ length: n }, (_, i) =>
        admin.create(Certificate.kind, {
          metadata: { name: `w${i}`, namespace: 'bench' },
          spec: {
            secretName: `w${i}`,
            dnsNames: [`*.z${i}.example.test`, `z${i}.example.test`],
            issuerRef: { name: 'acme' },
            privateKey: { algorithm: 'ECDSA' },
          },
        }),
      ),
    );
    await waitFor(
      `${n} Ready`,
      async () => {
        for (const c of await admin.listAll(Certificate.kind, { namespace: 'bench' })) {
          if (!ready.has(c.metadata.name!) && c.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True'))
            ready.set(c.metadata.name!, (performance.now() - t0) / 1000);
        }
        return ready.size === n;
      },
      { timeoutMs: 900_000, intervalMs: 250 },
    );
    // Cleanup (the TXT records removed) counts as part of what a certificate costs the DNS server.
    await new Promise((r) => setTimeout(r, 3_000));
    const requests = metricValue((await scrape(manager, '/metrics')).body, 'certmanager_http_acme_client_request_count') - requestsBefore;
    const times = [...ready.values()].sort((a, b) => a - b);
    await manager.stop();
    return {
      certificates: n,
      'names each': 2,
      'ACME requests / cert': (requests / n).toFixed(1),
      'DNS UPDATEs / cert': ((bind.updates() - updatesBefore) / n).toFixed(1),
      'Ready p50 s': times[Math.floor(n / 2)]!.toFixed(1),
      'all Ready s': times.at(-1)!.toFixed(1),
    };
  } finally {
    await plane.stop();
    await pebble.stop();
    await bind.stop();
  }
}

async function main() {
  const why = bindUnavailable();
  if (why) return console.log(`skipped: ${why}`);
  const rows = [];
  for (const n of (process.env.OPKIT_BENCH_DNS01_CERTS ?? '1,10').split(',').map(Number)) rows.push(await run(n));
  table(rows);
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}; the self-check runs every 10 s (cert-manager's default), so a certificate waits up to one period after its record is served`,
  );
}

runBench(main);
