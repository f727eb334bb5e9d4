// Time to issue N Certificates (ECDSA P-256) from a CA issuer, against a real API server, with the
// operator's controllers in-process. cert-manager's published figure: 500 certificates from 10 CA
// issuers in 417 s (≈1.2/s) with its default client limits (design/20221205-memory-management.md).
import { startControlPlane, waitFor } from '@opkit/testing';
import { table } from '../report.js';
import { startCertOperator } from './operator.js';
import { CERT_APIS } from '../../apps/cert-operator/src/api/index.js';

const { Certificate, Issuer } = CERT_APIS.opkit;

async function run(n: number) {
  const plane = await startControlPlane({ audit: true });
  try {
    const { admin, manager } = await startCertOperator(plane);
    const ready = async (name: string) =>
      (await admin.get(Certificate.kind, { namespace: 'bench', name })).status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
    await admin.create(Issuer.kind, { metadata: { name: 'selfsigned', namespace: 'bench' }, spec: { selfSigned: {} } });
    await admin.create(Certificate.kind, {
      metadata: { name: 'ca', namespace: 'bench' },
      spec: { secretName: 'ca', isCA: true, commonName: 'bench CA', duration: '8760h', issuerRef: { name: 'selfsigned' }, privateKey: { algorithm: 'ECDSA' } },
    });
    await waitFor('the CA', () => ready('ca'), { timeoutMs: 60_000 });
    await admin.create(Issuer.kind, { metadata: { name: 'ca', namespace: 'bench' }, spec: { ca: { secretName: 'ca' } } });
    await waitFor('the CA issuer', async () => (await admin.get(Issuer.kind, { namespace: 'bench', name: 'ca' })).status?.conditions?.[0]?.status === 'True');

    const since = new Date();
    const t0 = performance.now();
    for (let i = 0; i < n; i += 25) {
      await Promise.all(
        Array.from({ length: Math.min(25, n - i) }, (_, j) =>
          admin.create(Certificate.kind, {
            metadata: { name: `c-${i + j}`, namespace: 'bench' },
            spec: { secretName: `c-${i + j}`, dnsNames: [`c-${i + j}.bench.example.com`], issuerRef: { name: 'ca' }, privateKey: { algorithm: 'ECDSA' } },
          }),
        ),
      );
    }
    const created = performance.now();
    await waitFor(
      `${n} Ready`,
      async () => {
        const list = await admin.listAll(Certificate.kind, { namespace: 'bench' });
        return list.filter((c) => c.metadata.name !== 'ca' && c.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True')).length === n;
      },
      { timeoutMs: 900_000, intervalMs: 500 },
    );
    const seconds = (performance.now() - t0) / 1000;
    await new Promise((r) => setTimeout(r, 1_000));
    const writes = plane.audit!.writes({ since }).filter((e) => e.userAgent?.startsWith('cert-operator/'));
    const byKind = (r: string) => writes.filter((w) => w.objectRef?.resource === r).length;
    await manager.stop();
    return {
      certificates: n,
      'create all (s)': (created - t0) / 1000,
      'all Ready (s)': seconds,
      'certificates/s': Math.round((n / seconds) * 10) / 10,
      'writes/cert': Math.round((writes.length / n) * 10) / 10,
      'of which secrets': Math.round((byKind('secrets') / n) * 10) / 10,
      certificaterequests: Math.round((byKind('certificaterequests') / n) * 10) / 10,
      'certificates (status)': Math.round((byKind('certificates') / n) * 10) / 10,
    };
  } finally {
    await plane.stop();
  }
}

async function main() {
  const sizes = (process.env.OPKIT_BENCH_CERTS ?? '100,1000').split(',').map(Number);
  const rows = [];
  for (const n of sizes) rows.push(await run(n));
  table(rows);
}
void main();
