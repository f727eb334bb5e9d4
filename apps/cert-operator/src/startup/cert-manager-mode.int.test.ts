import { Client, CustomResourceDefinition, Lease, Secret, Transport, type Manager } from '@opkit/runtime';
import { testManager } from '@opkit/runtime/testing';
import { createCertificateAuthority, startControlPlane, waitFor, type ControlPlane } from '@opkit/testing';
import { createPrivateKey } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CERT_APIS } from '../api/index.js';
import { defaultConfig } from '../config.js';
import { addCertificateControllers } from '../controllers/index.js';
import { parseCSR } from '../pki/csr.js';
import { inspectCertificate } from '../pki/inspect.js';
import { caSign } from '../pki/sign.js';
import { CERT_MANAGER_LEASE, refuseWhileCertManagerLeads } from './cert-manager-lease.js';

const api = CERT_APIS['cert-manager'];
const { Certificate, CertificateRequest } = api;
const NS = 'shop';
/** MicroTime, as client-go writes a Lease's times. */
const microTime = (ms: number) => new Date(ms).toISOString().replace('Z', '000Z');

/**
 * cert-manager mode against a real API server: the operator serves cert-manager.io (its CRDs from
 * the same TypeBox definitions, the group as data), refuses to start while cert-manager's controller
 * holds its Lease, and a cert-manager manifest, unchanged, is issued with cert-manager's own
 * annotations and labels.
 */
describe('cert-manager mode', () => {
  let plane: ControlPlane;
  let admin: Client;
  let manager: Manager | undefined;

  beforeAll(async () => {
    plane = await startControlPlane();
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
    for (const r of api.resources) await admin.create(CustomResourceDefinition, r.crd as never);
    await waitFor('CRDs served', () => admin.list(Certificate.kind).then(() => true));
    for (const ns of [NS, 'cert-manager']) await plane.kubectl(['create', 'namespace', ns]);
  });
  afterAll(async () => {
    await manager?.stop();
    await plane?.stop();
  });

  it("refuses to start while cert-manager's controller holds its Lease, and starts once it is released", async () => {
    const lease = {
      metadata: { ...CERT_MANAGER_LEASE },
      spec: {
        holderIdentity: 'cert-manager-7d9f_0c1e',
        leaseDurationSeconds: 60,
        acquireTime: microTime(Date.now() - 30_000),
        renewTime: microTime(Date.now() - 2_000),
      },
    };
    await admin.create(Lease, lease as never);
    await expect(refuseWhileCertManagerLeads(admin, CERT_MANAGER_LEASE, Date.now())).rejects.toThrow(
      /cert-manager's controller holds its leader Lease kube-system\/cert-manager-controller \(holder "cert-manager-7d9f_0c1e", renewed \d+ s ago\).*Scale cert-manager's controller to zero/,
    );
    // Scaled to zero: client-go releases the Lease on its way out (no holder, a one-second duration).
    await admin.patch(Lease, CERT_MANAGER_LEASE, { spec: { holderIdentity: null, leaseDurationSeconds: 1 } });
    await expect(refuseWhileCertManagerLeads(admin, CERT_MANAGER_LEASE, Date.now())).resolves.toMatchObject({ held: false, why: 'released (no holder)' });
  });

  it('a Lease it may not read is refused too, saying what to grant', async () => {
    const nobody = new Client(new Transport((await plane.userCredentials('nobody')).kubeConfig), { fieldManager: 'test' });
    await expect(refuseWhileCertManagerLeads(nobody, CERT_MANAGER_LEASE, Date.now())).rejects.toThrow(
      /cannot read cert-manager's leader Lease kube-system\/cert-manager-controller.*forbidden.*Grant get on leases there/is,
    );
  });

  it("issues a cert-manager manifest unchanged, with cert-manager's annotations and labels", async () => {
    manager = testManager(plane.kubeConfig, { name: 'cert-operator' }).manager;
    addCertificateControllers(manager, { ...defaultConfig({ clusterResourceNamespace: 'cert-manager' }), api, acme: false });
    await manager.start();
    const manifest = [
      { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'selfsigned', namespace: NS }, spec: { selfSigned: {} } },
      {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Certificate',
        metadata: { name: 'web', namespace: NS },
        spec: { secretName: 'web-tls', dnsNames: ['web.shop.example'], issuerRef: { name: 'selfsigned', kind: 'Issuer', group: 'cert-manager.io' } },
      },
    ];
    await plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: manifest }) });
    const ready = async () => (await admin.get(Certificate.kind, { namespace: NS, name: 'web' })).status?.conditions?.find((c) => c.type === 'Ready');
    await waitFor('the Certificate Ready', async () => (await ready())?.status === 'True', { timeoutMs: 60_000 });

    const secret = await admin.get(Secret, { namespace: NS, name: 'web-tls' });
    expect(secret.metadata.annotations).toMatchObject({
      'cert-manager.io/certificate-name': 'web',
      'cert-manager.io/issuer-name': 'selfsigned',
      'cert-manager.io/issuer-kind': 'Issuer',
      'cert-manager.io/issuer-group': 'cert-manager.io',
      'cert-manager.io/alt-names': 'web.shop.example',
    });
    expect(Object.keys(secret.metadata.annotations ?? {}).filter((k) => k.startsWith('cert.opkit.dev/'))).toEqual([]);
    expect(secret.metadata.labels).toMatchObject({ 'controller.cert-manager.io/fao': 'true' });

    // The request as cert-manager names and marks it: `<certificate>-<revision>`, its revision and
    // key annotations, approved by cert-manager.io.
    const [cr, ...more] = (await admin.list(CertificateRequest.kind, { namespace: NS })).items;
    expect(more).toEqual([]);
    expect(cr!.metadata.name).toBe('web-1');
    expect(cr!.metadata.annotations).toMatchObject({ 'cert-manager.io/certificate-name': 'web', 'cert-manager.io/certificate-revision': '1' });
    expect(cr!.status?.conditions?.find((c) => c.type === 'Approved')).toMatchObject({ status: 'True', reason: 'cert-manager.io' });
  });

  it("an external issuer's Certificate: the request is approved and left to its controller, whose certificate lands in the Secret", async () => {
    // The test plays the external issuer's controller (a group of its own, a kind of its own).
    const issuerRef = { name: 'corp', kind: 'CorpClusterIssuer', group: 'issuer.corp.example' };
    await plane.kubectl(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'cert-manager.io/v1',
        kind: 'Certificate',
        metadata: { name: 'api', namespace: NS },
        spec: { secretName: 'api-tls', dnsNames: ['api.shop.example'], issuerRef },
      }),
    });
    const requestOf = async () => (await admin.list(CertificateRequest.kind, { namespace: NS })).items.find((r) => r.metadata.name === 'api-1');
    await waitFor(
      'the request made and approved',
      async () => (await requestOf())?.status?.conditions?.some((c) => c.type === 'Approved' && c.status === 'True') ?? false,
      {
        timeoutMs: 30_000,
      },
    );
    const cr = (await requestOf())!;
    expect(cr.spec.issuerRef).toEqual(issuerRef);
    // Not ours to sign: no Ready condition, no certificate, after the approval.
    expect(cr.status?.conditions?.map((c) => c.type)).toEqual(['Approved']);
    expect(cr.status?.certificate).toBeUndefined();

    // The external controller signs it, as issuer-lib based issuers do.
    const ca = await createCertificateAuthority('corp CA', 30);
    const csr = await parseCSR(Buffer.from(cr.spec.request, 'base64').toString('utf8'));
    const issued = await caSign(
      { csr, durationMs: 30 * 86_400_000, isCA: false, usages: ['digital signature', 'key encipherment'] },
      { chainPem: ca.cert, key: createPrivateKey(ca.key) },
    );
    const b64 = (t: string) => Buffer.from(t).toString('base64');
    await admin.updateStatus(CertificateRequest.kind, {
      ...cr,
      status: {
        ...cr.status,
        certificate: b64(issued.certificate),
        ca: b64(ca.cert),
        conditions: [
          ...(cr.status?.conditions ?? []),
          { type: 'Ready', status: 'True', reason: 'Issued', message: 'issued by corp', lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') },
        ],
      },
    });
    const ready = async () => (await admin.get(Certificate.kind, { namespace: NS, name: 'api' })).status?.conditions?.find((c) => c.type === 'Ready');
    await waitFor('the Certificate Ready', async () => (await ready())?.status === 'True', { timeoutMs: 30_000 });
    const secret = await admin.get(Secret, { namespace: NS, name: 'api-tls' });
    expect(inspectCertificate(Buffer.from(secret.data!['tls.crt']!, 'base64').toString('utf8')).dnsNames).toEqual(['api.shop.example']);
    expect(secret.metadata.annotations).toMatchObject({
      'cert-manager.io/issuer-group': 'issuer.corp.example',
      'cert-manager.io/issuer-kind': 'CorpClusterIssuer',
    });
    // And it stays issued: no second request (an external issuer's certificate does not loop).
    await new Promise((r) => setTimeout(r, 3_000));
    expect(
      (await admin.list(CertificateRequest.kind, { namespace: NS })).items.filter((r) => r.metadata.name?.startsWith('api-')).map((r) => r.metadata.name),
    ).toEqual(['api-1']);
  });
});
