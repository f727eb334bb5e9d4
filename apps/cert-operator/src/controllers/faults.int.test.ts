import { Client, CustomResourceDefinition, Secret, Transport } from '@opkit/runtime';
import { assertFaultInvariants, describeFaultRun, faultSeeds, runUnderFaults } from '@opkit/runtime/testing';
import {
  faultReplay, freePort, startControlPlane, startIngressStandIn, startPebble, waitFor, workspaceApp, type ControlPlane, type IngressStandIn, type Pebble,
} from '@opkit/testing';
import { X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { Certificate, type CertificateObject } from '../api/v1/certificate.js';
import { defaultConfig } from '../config.js';
import { CUSTOM_RESOURCES } from '../manifests/generate.js';
import { addCertificateControllers } from './index.js';

const OPERATOR = 'cert-operator';
const SYSTEM = 'opkit-system';
const SOLVER = workspaceApp('acme-solver');
const CA_LEAVES = ['leaf-0', 'leaf-1', 'leaf-2', 'leaf-3'];
const ACME_LEAVES = ['acme-0', 'acme-1'];

const sansOf = (s: { data?: Record<string, string> }) => {
  const pem = Buffer.from(s.data?.['tls.crt'] ?? '', 'base64').toString();
  return pem ? (new X509Certificate(pem).subjectAltName ?? '').split(', ').map((n) => n.replace(/^DNS:/, '')).sort().join(',') : '(none)';
};

/**
 * The cert operator, two replicas each behind a fault-injecting proxy, issuing from a CA issuer
 * (itself issued by a SelfSigned one, under the same faults) and from an ACME issuer against
 * Pebble with HTTP-01 solver pods, while an admin changes the certificates' names. Once the faults
 * stop, every Certificate is Ready for its current generation and its Secret holds a certificate
 * for exactly the names asked; while they last, writes stay bounded and only the leader writes.
 */
describe('the cert operator behind a fault-injecting API proxy', () => {
  let plane: ControlPlane;
  let admin: Client;
  let standIn: IngressStandIn;
  let pebble: Pebble;
  let httpPort: number;
  beforeAll(async () => {
    if (!existsSync(SOLVER.bundle)) throw new Error(`${SOLVER.bundle} is missing: build it first (nx run @opkit/acme-solver:build)`);
    plane = await startControlPlane({ nodes: 1, audit: true });
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
    for (const r of CUSTOM_RESOURCES) await admin.create(CustomResourceDefinition, r.crd as never);
    await waitFor('CRDs served', () => admin.list(Certificate.kind).then(() => true));
    await plane.kubectl(['create', 'namespace', SYSTEM]);
    httpPort = await freePort();
    standIn = await startIngressStandIn(plane.kubeConfig, { port: httpPort, images: { [SOLVER.image.repository]: SOLVER.local }, ingressClass: 'nginx' });
    pebble = await startPebble({ httpPort });
  });
  afterAll(async () => {
    await standIn?.stop();
    await pebble?.stop();
    await plane?.stop();
  });

  for (const seed of faultSeeds([1, 2])) {
    it(`issues every Certificate from CA and ACME issuers once the faults stop, writing boundedly and only from the leader (seed ${seed})`, async () => {
      const ns = `faults-${seed}`;
      const replay = faultReplay(import.meta.url, seed);
      await plane.kubectl(['create', 'namespace', ns]);
      const apply = (obj: object) => plane.kubectl(['apply', '-n', ns, '-f', '-'], { input: JSON.stringify(obj) });
      const cert = (name: string, issuer: string, dnsNames: string[], extra: object = {}) =>
        apply({ apiVersion: 'cert.opkit.dev/v1', kind: 'Certificate', metadata: { name }, spec: { secretName: name, issuerRef: { name: issuer }, dnsNames, privateKey: { algorithm: 'ECDSA' }, ...extra } });
      const want = new Map<string, string[]>();
      // Everything exists before the operator starts: the whole chain is issued under faults.
      await apply({ apiVersion: 'cert.opkit.dev/v1', kind: 'Issuer', metadata: { name: 'selfsigned' }, spec: { selfSigned: {} } });
      await cert('root-ca', 'selfsigned', [], { isCA: true, commonName: 'faults root', dnsNames: undefined });
      await apply({ apiVersion: 'cert.opkit.dev/v1', kind: 'Issuer', metadata: { name: 'ca' }, spec: { ca: { secretName: 'root-ca' } } });
      await apply({
        apiVersion: 'cert.opkit.dev/v1',
        kind: 'Issuer',
        metadata: { name: 'le' },
        spec: { acme: { server: pebble.directoryUrl, email: 'ops@example.test', caBundle: Buffer.from(pebble.tlsCaPem).toString('base64'), privateKeySecretRef: { name: 'le-account' }, solvers: [{ http01: { ingress: { ingressClassName: 'nginx' } } }] } },
      });
      for (const c of CA_LEAVES) want.set(c, [`${c}.${ns}.example.test`]);
      for (const c of ACME_LEAVES) want.set(c, [`${c}.${ns}.example.test`]);
      for (const c of CA_LEAVES) await cert(c, 'ca', want.get(c)!);
      for (const c of ACME_LEAVES) await cert(c, 'le', want.get(c)!);

      const report = await runUnderFaults(
        {
          plane,
          seed,
          name: OPERATOR,
          leaseNamespace: ns,
          manager: () => ({ namespaces: [ns, SYSTEM] }),
          install: (manager) =>
            addCertificateControllers(
              manager,
              defaultConfig({ clusterResourceNamespace: SYSTEM, selfCheckNameservers: [pebble.dnsServer], selfCheckPort: httpPort, selfCheck: { requiredPasses: 1, intervalMs: 500, timeoutMs: 20_000 } }),
            ),
          // A CA leaf renamed every second (each in turn every 4 s); an ACME one every 5 s.
          churn: async (i) => {
            if (i % 2 === 0) {
              const c = CA_LEAVES[(i >> 1) % CA_LEAVES.length]!;
              want.set(c, [`${c}-v${i}.${ns}.example.test`]);
              await admin.patch(Certificate.kind, { namespace: ns, name: c }, { spec: { dnsNames: want.get(c) } });
            } else if (i % 10 === 1) {
              const c = ACME_LEAVES[Math.floor(i / 10) % ACME_LEAVES.length]!;
              want.set(c, [`${c}-v${i}.${ns}.example.test`]);
              await admin.patch(Certificate.kind, { namespace: ns, name: c }, { spec: { dnsNames: want.get(c) } });
            }
          },
          churnIntervalMs: 500,
          convergeTimeoutMs: 90_000,
          converged: async () => {
            const lagging: string[] = [];
            for (const c of (await admin.list(Certificate.kind, { namespace: ns })).items as CertificateObject[]) {
              const name = c.metadata.name!;
              const ready = c.status?.conditions?.find((x) => x.type === 'Ready');
              if (ready?.status !== 'True' || ready.observedGeneration !== c.metadata.generation) {
                lagging.push(`${name}: Ready=${ready?.status} (${ready?.reason}: ${ready?.message}) gen ${ready?.observedGeneration}/${c.metadata.generation}`);
                continue;
              }
              const names = want.get(name);
              if (!names) continue;
              const got = sansOf((await admin.find(Secret, { namespace: ns, name })) ?? {});
              if (got !== [...names].sort().join(',')) lagging.push(`${name}: the Secret names ${got}, want ${names.join(',')}`);
            }
            if (!lagging.length) return true;
            throw new Error(`not converged: ${lagging.join('; ')}`);
          },
        },
        replay,
      );
      console.log(describeFaultRun(report));
      // Every rename reissues: a CertificateRequest, a Secret for the next private key (created by
      // generateName, so counted on the namespace's collection), the Secret, the statuses. 28 to 29 a
      // minute were measured (seeds 1, 2), to the Secrets' collection; the bound is three times that.
      assertFaultInvariants(report, { maxWritesPerObjectPerMinute: 90 }, replay);
    });
  }
});
