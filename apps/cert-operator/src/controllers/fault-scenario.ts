import { Client, Secret, Transport } from '@opkit/runtime';
import type { FaultScenario } from '@opkit/runtime/testing/faults';
import type { ControlPlane, Pebble } from '@opkit/testing';
import { CERT_APIS } from '../api/index.js';
import type { CertificateObject } from '../api/v1/certificate.js';
import { defaultConfig } from '../config.js';
import { inspectCertificate } from '../pki/inspect.js';
import { addCertificateControllers } from './index.js';

const { Certificate, CertificateRequest, A } = CERT_APIS.opkit;

export const FAULTS_SYSTEM_NAMESPACE = 'opkit-system';
const CA_LEAVES = ['leaf-0', 'leaf-1', 'leaf-2', 'leaf-3'];
const ACME_LEAVES = ['acme-0', 'acme-1'];

const sansOf = (s: { data?: Record<string, string> }) => {
  const pem = Buffer.from(s.data?.['tls.crt'] ?? '', 'base64').toString();
  return pem ? [...inspectCertificate(pem).dnsNames].sort().join(',') : '(none)';
};

/**
 * The cert operator under faults: two replicas issuing from a CA issuer (itself issued by a
 * SelfSigned one, under the same faults) and from an ACME issuer against Pebble with HTTP-01
 * solver pods (served by the ingress stand-in on `acme.httpPort`), while an admin renames the
 * certificates. Everything exists before the operator starts, so the whole chain is issued under
 * faults. Converged: every Certificate is Ready for its current generation, and its Secret holds a
 * certificate for exactly the names asked. The CRDs and `FAULTS_SYSTEM_NAMESPACE` must exist.
 */
export async function certFaultScenario(plane: ControlPlane, ns: string, acme: { pebble: Pebble; httpPort: number }): Promise<FaultScenario> {
  const admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
  await plane.kubectl(['create', 'namespace', ns]);
  const apply = (obj: object) => plane.kubectl(['apply', '-n', ns, '-f', '-'], { input: JSON.stringify(obj) });
  const cert = (name: string, issuer: string, spec: object) =>
    apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'Certificate',
      metadata: { name },
      spec: { secretName: name, issuerRef: { name: issuer }, privateKey: { algorithm: 'ECDSA' }, ...spec },
    });
  const want = new Map<string, string[]>();
  await apply({ apiVersion: 'cert.opkit.dev/v1', kind: 'Issuer', metadata: { name: 'selfsigned' }, spec: { selfSigned: {} } });
  await cert('root-ca', 'selfsigned', { isCA: true, commonName: 'faults root' });
  await apply({ apiVersion: 'cert.opkit.dev/v1', kind: 'Issuer', metadata: { name: 'ca' }, spec: { ca: { secretName: 'root-ca' } } });
  const { pebble, httpPort } = acme;
  await apply({
    apiVersion: 'cert.opkit.dev/v1',
    kind: 'Issuer',
    metadata: { name: 'le' },
    spec: {
      acme: {
        server: pebble.directoryUrl,
        email: 'ops@example.test',
        caBundle: Buffer.from(pebble.tlsCaPem).toString('base64'),
        privateKeySecretRef: { name: 'le-account' },
        solvers: [{ http01: { ingress: { ingressClassName: 'nginx' } } }],
      },
    },
  });
  for (const c of [...CA_LEAVES, ...ACME_LEAVES]) want.set(c, [`${c}.${ns}.example.test`]);
  for (const c of CA_LEAVES) await cert(c, 'ca', { dnsNames: want.get(c) });
  for (const c of ACME_LEAVES) await cert(c, 'le', { dnsNames: want.get(c) });
  const listRequests = () => admin.list(CertificateRequest.kind, { namespace: ns });
  const rename = async (c: string, i: number) => {
    want.set(c, [`${c}-v${i}.${ns}.example.test`]);
    await admin.patch(Certificate.kind, { namespace: ns, name: c }, { spec: { dnsNames: want.get(c) } });
  };

  return {
    run: {
      name: 'cert-operator',
      leaseNamespace: ns,
      manager: () => ({ namespaces: [ns, FAULTS_SYSTEM_NAMESPACE] }),
      install: (manager) =>
        addCertificateControllers(
          manager,
          defaultConfig({
            clusterResourceNamespace: FAULTS_SYSTEM_NAMESPACE,
            selfCheckNameservers: [pebble.dnsServer],
            selfCheckPort: httpPort,
            // Past the self-check timeout the CA is asked anyway (challenges.ts), and a solver not
            // yet reachable then fails the order for good: the default is 10 minutes. 20 s was within
            // reach of this scenario on a loaded CI machine (hangs of up to 5 s, leadership changing
            // hands, solver pods recreated), and one ACME certificate then waited out its 1 h backoff.
            selfCheck: { requiredPasses: 1, intervalMs: 500, timeoutMs: 60_000 },
          }),
        ),
      // A CA leaf renamed every second (each in turn every 4 s); an ACME one every 5 s.
      churn: async (i) => {
        if (i % 2 === 0) await rename(CA_LEAVES[(i >> 1) % CA_LEAVES.length]!, i);
        else if (i % 10 === 1) await rename(ACME_LEAVES[Math.floor(i / 10) % ACME_LEAVES.length]!, i);
      },
      churnIntervalMs: 500,
      convergeTimeoutMs: 90_000,
      converged: async () => {
        const lagging: string[] = [];
        // Listed once per check, and only when something lags.
        let requests: ReturnType<typeof listRequests> | undefined;
        for (const c of (await admin.list(Certificate.kind, { namespace: ns })).items as CertificateObject[]) {
          const name = c.metadata.name!;
          const ready = c.status?.conditions?.find((x) => x.type === 'Ready');
          if (ready?.status !== 'True' || ready.observedGeneration !== c.metadata.generation) {
            // What failed, if a request did: the reason for a backoff is on the request.
            const failed = (await (requests ??= listRequests())).items
              .filter((r) => r.metadata.annotations?.[A.certificateName] === name)
              .map((r) => r.status?.conditions?.find((x) => x.type === 'Ready'))
              .filter((x) => x?.reason === 'Failed' || x?.reason === 'Denied');
            // The cause first: a failure summary keeps only the message's first few hundred characters.
            lagging.push(
              `${name}: ` +
                (failed.length ? `failed requests: ${failed.map((x) => x!.message).join(' | ')}; ` : '') +
                `Ready=${ready?.status} (${ready?.reason}: ${ready?.message}) gen ${ready?.observedGeneration}/${c.metadata.generation}` +
                `; Issuing: ${c.status?.conditions?.find((x) => x.type === 'Issuing')?.message}`,
            );
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
    // Every rename reissues: a CertificateRequest, a Secret for the next private key (created by
    // generateName, so counted on the namespace's collection), the Secret, the statuses. The soak
    // measured 71 to 73 a minute to a leaf's status over 2 minutes of churn (seeds 2, 3); twice that.
    maxWritesPerObjectPerMinute: 150,
  };
}
