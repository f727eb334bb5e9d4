// ingress-shim: the time from an annotated Ingress being created to its Certificate being Ready
// (CA issuer, so the shim and the issuance are what is measured), for one Ingress alone and for a
// batch created at once; and the API writes the shim itself makes per Ingress (audit log).
//   OPKIT_BENCH_SHIM_INGRESSES=1,50 (default)
import { startControlPlane, waitFor } from '@opkit/testing';
import { loadavg } from 'node:os';
import { table, runBench } from '../report.js';
import { startCertOperator } from './operator.js';
import { CERT_APIS } from '../../apps/cert-operator/src/api/index.js';

const { Certificate, Issuer } = CERT_APIS.opkit;

async function run(n: number) {
  const plane = await startControlPlane({ audit: true });
  try {
    const { admin, manager } = await startCertOperator(plane);
    const apply = (o: object) => plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify(o) });
    await apply({ apiVersion: 'cert.opkit.dev/v1', kind: 'Issuer', metadata: { name: 'selfsigned', namespace: 'bench' }, spec: { selfSigned: {} } });
    await apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'Certificate',
      metadata: { name: 'root', namespace: 'bench' },
      spec: { secretName: 'root', isCA: true, commonName: 'bench root', issuerRef: { name: 'selfsigned' }, privateKey: { algorithm: 'ECDSA' } },
    });
    await apply({ apiVersion: 'cert.opkit.dev/v1', kind: 'Issuer', metadata: { name: 'ca', namespace: 'bench' }, spec: { ca: { secretName: 'root' } } });
    await waitFor('the CA issuer', async () => (await admin.get(Issuer.kind, { namespace: 'bench', name: 'ca' })).status?.conditions?.[0]?.status === 'True', {
      timeoutMs: 30_000,
    });
    const since = new Date();
    const t0 = performance.now();
    const ingresses = Array.from({ length: n }, (_, i) => ({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: `app${i}`, namespace: 'bench', annotations: { 'cert-manager.io/issuer': 'ca', 'cert-manager.io/private-key-algorithm': 'ECDSA' } },
      spec: {
        tls: [{ hosts: [`app${i}.example.com`], secretName: `app${i}-tls` }],
        rules: [
          { host: `app${i}.example.com`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'app', port: { number: 80 } } } }] } },
        ],
      },
    }));
    await plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: ingresses }) });
    const ready = new Map<string, number>();
    await waitFor(
      `${n} Ready`,
      async () => {
        for (const c of await admin.listAll(Certificate.kind, { namespace: 'bench' })) {
          if (c.metadata.name !== 'root' && !ready.has(c.metadata.name!) && c.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True'))
            ready.set(c.metadata.name!, (performance.now() - t0) / 1000);
        }
        return ready.size === n;
      },
      { timeoutMs: 600_000, intervalMs: 100 },
    );
    await new Promise((r) => setTimeout(r, 2_000));
    const shimWrites = plane
      .audit!.writes({ since })
      .filter((w) => w.userAgent?.startsWith('cert-operator/') && w.objectRef?.resource === 'certificates' && !w.objectRef.subresource);
    const times = [...ready.values()].sort((a, b) => a - b);
    await manager.stop();
    return {
      ingresses: n,
      'Ready p50 s': times[Math.floor(n / 2)]!.toFixed(2),
      'all Ready s': times.at(-1)!.toFixed(2),
      'Certificate writes / Ingress (shim)': (shimWrites.length / n).toFixed(1),
    };
  } finally {
    await plane.stop();
  }
}

async function main() {
  const rows = [];
  for (const n of (process.env.OPKIT_BENCH_SHIM_INGRESSES ?? '1,50').split(',').map(Number)) rows.push(await run(n));
  table(rows);
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
}

runBench(main);
