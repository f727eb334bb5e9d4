import { Client, CustomResourceDefinition, Secret, Transport, type Manager } from '@opkit/runtime';
import { testManager } from '@opkit/runtime/testing';
import {
  awsPrivateCaIssuerToolset,
  cmctlRenewConditions,
  kubectlApply,
  startAwsPcaStandIn,
  startAwsPrivateCaIssuer,
  startControlPlane,
  waitFor,
  type AwsPcaStandIn,
  type AwsPrivateCaIssuerToolset,
  type ControlPlane,
} from '@opkit/testing';
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CERT_APIS } from '../api/index.js';
import type { CertificateObject } from '../api/v1/certificate.js';
import { defaultConfig } from '../config.js';
import { addCertificateControllers } from '../controllers/index.js';

const api = CERT_APIS['cert-manager'];
const { Certificate, CertificateRequest } = api;
const NS = 'payments';
const ISSUER_REF = { group: 'awspca.cert-manager.io', kind: 'AWSPCAClusterIssuer', name: 'corp-pca' };

/**
 * A real external issuer, unchanged: the AWS Private CA issuer v1.11 (built from its module), its
 * AWS SDK pointed at a stand-in of AWS Private CA's API, beside the cert operator in cert-manager
 * mode. The operator makes and approves the requests (the issuer signs approved ones only); the
 * issuer signs them through "AWS"; the operator puts what it signed into the Secret, renews through
 * it, and never loops.
 */
describe('an external issuer (AWS Private CA issuer) with the cert operator in cert-manager mode', () => {
  let plane: ControlPlane;
  let admin: Client;
  let toolset: AwsPrivateCaIssuerToolset;
  let pca: AwsPcaStandIn;
  let issuer: ReturnType<typeof startAwsPrivateCaIssuer> | undefined;
  let manager: Manager | undefined;

  const certificate = () => admin.get(Certificate.kind, { namespace: NS, name: 'ledger' }) as Promise<CertificateObject>;
  const ready = (c: CertificateObject) => c.status?.conditions?.find((x) => x.type === 'Ready');
  const leaf = async () => new X509Certificate(Buffer.from((await admin.get(Secret, { namespace: NS, name: 'ledger-tls' })).data!['tls.crt']!, 'base64'));
  const issues = () => pca.calls.filter((c) => c.operation === 'IssueCertificate');
  const withLog = (e: unknown) => {
    throw new Error(`${String(e)}\nthe issuer's log:\n${issuer?.recentOutput(30)}`);
  };

  beforeAll(async () => {
    toolset = await awsPrivateCaIssuerToolset();
    pca = await startAwsPcaStandIn();
    plane = await startControlPlane();
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
    for (const r of api.resources) await admin.create(CustomResourceDefinition, r.crd as never);
    await kubectlApply(plane.kubeconfigPath, toolset.crds);
    await waitFor('CRDs served', () => admin.list(Certificate.kind).then(() => true));
    for (const ns of [NS, 'cert-manager']) await plane.kubectl(['create', 'namespace', ns]);

    manager = testManager(plane.kubeConfig, { name: 'cert-operator' }).manager;
    addCertificateControllers(manager, { ...defaultConfig({ clusterResourceNamespace: 'cert-manager' }), api, acme: false });
    await manager.start();
    issuer = startAwsPrivateCaIssuer(toolset, { kubeconfigPath: plane.kubeconfigPath, pca });
  }, 600_000);
  afterAll(async () => {
    await issuer?.stop();
    await manager?.stop();
    await plane?.stop();
    await pca?.stop();
  });

  it("issues a Certificate for the issuer's kind: approved by the operator, signed through AWS Private CA, into the Secret with its CA", async () => {
    await plane.kubectl(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [
          {
            apiVersion: 'awspca.cert-manager.io/v1beta1',
            kind: 'AWSPCAClusterIssuer',
            metadata: { name: 'corp-pca' },
            spec: { arn: pca.arn, region: 'us-east-1' },
          },
          {
            apiVersion: 'cert-manager.io/v1',
            kind: 'Certificate',
            metadata: { name: 'ledger', namespace: NS },
            spec: {
              secretName: 'ledger-tls',
              dnsNames: ['ledger.payments.svc'],
              duration: '720h',
              privateKey: { algorithm: 'ECDSA', size: 256 },
              issuerRef: ISSUER_REF,
            },
          },
        ],
      }),
    });
    await waitFor('the Certificate Ready', async () => ready(await certificate())?.status === 'True', { timeoutMs: 90_000 }).catch(withLog);

    const [cr, ...more] = (await admin.list(CertificateRequest.kind, { namespace: NS })).items;
    expect(more).toEqual([]);
    expect(cr!.metadata.name).toBe('ledger-1');
    expect(cr!.spec.issuerRef).toEqual(ISSUER_REF);
    // Approved by the operator (cert-manager's approver's reason), signed and marked by the issuer.
    expect(cr!.status?.conditions?.find((c) => c.type === 'Approved')).toMatchObject({ status: 'True', reason: 'cert-manager.io' });
    expect(cr!.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True', reason: 'Issued' });
    expect(cr!.metadata.annotations?.['aws-privateca-issuer/certificate-arn']).toBe(issues()[0]!.certificateArn);

    const cert = await leaf();
    const ca = new X509Certificate(pca.caPem);
    expect(cert.verify(ca.publicKey)).toBe(true);
    expect(cert.subjectAltName).toBe('DNS:ledger.payments.svc');
    const secret = await admin.get(Secret, { namespace: NS, name: 'ledger-tls' });
    expect(Buffer.from(secret.data!['ca.crt']!, 'base64').toString().trim()).toBe(pca.caPem.trim());
    expect(secret.metadata.annotations).toMatchObject({
      'cert-manager.io/issuer-group': ISSUER_REF.group,
      'cert-manager.io/issuer-kind': ISSUER_REF.kind,
      'cert-manager.io/issuer-name': ISSUER_REF.name,
    });
    // The 720h asked for, as the issuer passed it on to the CA.
    expect(Date.parse(cert.validTo) - Date.parse(cert.validFrom)).toBeGreaterThanOrEqual(720 * 3_600_000);
    expect(issues()).toHaveLength(1);
  });

  it('renews through it when asked (cmctl renew), with exactly one new request, and then stays quiet', async () => {
    const before = (await leaf()).serialNumber;
    const c = await certificate();
    await admin.updateStatus(Certificate.kind, { ...c, status: { ...c.status, conditions: cmctlRenewConditions(c.status?.conditions) } } as never);
    await waitFor('revision 2', async () => (await certificate()).status?.revision === 2, { timeoutMs: 90_000 }).catch(withLog);
    expect((await leaf()).serialNumber).not.toBe(before);
    expect(ready(await certificate())?.status).toBe('True');

    // An external issuer's certificate does not loop: nothing more is asked of the CA.
    await new Promise((r) => setTimeout(r, 5_000));
    expect(issues()).toHaveLength(2);
    expect((await admin.list(CertificateRequest.kind, { namespace: NS })).items.map((r) => r.metadata.name)).toEqual(['ledger-2']);
  });
});
