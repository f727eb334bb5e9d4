import { Client, CoreEvent, CustomResourceDefinition, Ingress, Secret, Transport, type Manager } from '@opkit/runtime';
import { testManager } from '@opkit/runtime/testing';
import { startControlPlane, waitFor, type ControlPlane } from '@opkit/testing';
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../config.js';
import { CUSTOM_RESOURCES } from '../../manifests/generate.js';
import { addCertificateControllers } from '../index.js';
import { CERT_APIS } from '../../api/index.js';

const { Certificate, Issuer } = CERT_APIS.opkit;

const SYSTEM = 'opkit-system';

describe('ingress-shim against a real API server', () => {
  let plane: ControlPlane;
  let admin: Client;
  let manager: Manager;
  let n = 0;
  const apply = (obj: object) => plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify(obj) });
  const ns = async () => {
    const name = `shim${++n}`;
    await plane.kubectl(['create', 'namespace', name]);
    return name;
  };
  const ingress = (namespace: string, annotations: Record<string, string>, tls: { hosts?: string[]; secretName?: string }[]) =>
    apply({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'shop', namespace, annotations },
      spec: {
        ingressClassName: 'traefik',
        tls,
        rules: [
          { host: 'shop.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'shop', port: { number: 80 } } } }] } },
        ],
      },
    });
  const events = async (namespace: string, reason: string) =>
    (await admin.list(CoreEvent, { namespace, fieldSelector: `involvedObject.kind=Ingress,reason=${reason}` })).items.map((e) => e.message);
  // Events are posted after the write they report, asynchronously: wait for the first, then read them all.
  const posted = async (namespace: string, reason: string) => {
    await waitFor(`a ${reason} event`, async () => (await events(namespace, reason)).length > 0);
    return events(namespace, reason);
  };
  const readyCert = (namespace: string, name: string, revision = 1) =>
    waitFor(
      `Certificate ${name} Ready (revision ${revision})`,
      async () => {
        const c = await admin.find(Certificate.kind, { namespace, name });
        return c?.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True') && (c.status.revision ?? 0) >= revision && c;
      },
      { timeoutMs: 30_000 },
    );

  async function caIssuer(namespace: string) {
    await apply({ apiVersion: 'cert.opkit.dev/v1', kind: 'Issuer', metadata: { name: 'selfsigned', namespace }, spec: { selfSigned: {} } });
    await apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'Certificate',
      metadata: { name: 'root', namespace },
      spec: { secretName: 'root', isCA: true, commonName: 'shim root', issuerRef: { name: 'selfsigned' }, privateKey: { algorithm: 'ECDSA' } },
    });
    await readyCert(namespace, 'root');
    await apply({ apiVersion: 'cert.opkit.dev/v1', kind: 'Issuer', metadata: { name: 'ca', namespace }, spec: { ca: { secretName: 'root' } } });
    await waitFor('the CA issuer Ready', async () => (await admin.get(Issuer.kind, { namespace, name: 'ca' })).status?.conditions?.[0]?.status === 'True');
  }

  beforeAll(async () => {
    plane = await startControlPlane({ audit: true });
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
    for (const r of CUSTOM_RESOURCES) await admin.create(CustomResourceDefinition, r.crd as never);
    await waitFor('CRDs served', () => admin.list(Certificate.kind).then(() => true));
    await plane.kubectl(['create', 'namespace', SYSTEM]);
    manager = testManager(plane.kubeConfig, { name: 'cert-operator' }).manager;
    addCertificateControllers(manager, defaultConfig({ clusterResourceNamespace: SYSTEM }));
    await manager.start();
  });
  afterAll(async () => {
    await manager?.stop();
    await plane?.stop();
  });

  it("an Ingress annotated as cert-manager's docs show gets a Ready Certificate per TLS entry, kept in step with the Ingress", async () => {
    const namespace = await ns();
    await caIssuer(namespace);
    await ingress(namespace, { 'cert-manager.io/issuer': 'ca', 'cert-manager.io/private-key-algorithm': 'ECDSA' }, [
      { hosts: ['shop.example.com', 'www.shop.example.com'], secretName: 'shop-tls' },
    ]);
    const c = await readyCert(namespace, 'shop-tls');
    const ing = await admin.get(Ingress, { namespace, name: 'shop' });
    expect(c.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Ingress', name: 'shop', uid: ing.metadata.uid, controller: true })]);
    const leaf = new X509Certificate(Buffer.from((await admin.get(Secret, { namespace, name: 'shop-tls' })).data!['tls.crt']!, 'base64').toString());
    expect(leaf.subjectAltName).toBe('DNS:shop.example.com, DNS:www.shop.example.com');
    expect(await posted(namespace, 'CreateCertificate')).toEqual(['Successfully created Certificate "shop-tls"']);

    // Nothing changed: a resync of the Ingress writes nothing.
    const rv = c.metadata.resourceVersion;
    await plane.kubectl(['annotate', 'ingress', 'shop', '-n', namespace, 'touched=1']);
    await new Promise((r) => setTimeout(r, 2_000));
    expect((await admin.get(Certificate.kind, { namespace, name: 'shop-tls' })).metadata.resourceVersion).toBe(rv);

    // A host added: the Certificate follows and is re-issued for it.
    await ingress(namespace, { 'cert-manager.io/issuer': 'ca', 'cert-manager.io/private-key-algorithm': 'ECDSA' }, [
      { hosts: ['shop.example.com', 'www.shop.example.com', 'api.shop.example.com'], secretName: 'shop-tls' },
    ]);
    const renewed = await readyCert(namespace, 'shop-tls', 2);
    expect(renewed.spec.dnsNames).toEqual(['shop.example.com', 'www.shop.example.com', 'api.shop.example.com']);
    expect(await posted(namespace, 'UpdateCertificate')).toEqual(['Successfully updated Certificate "shop-tls"']);

    // The TLS entry removed: its Certificate goes.
    await ingress(namespace, { 'cert-manager.io/issuer': 'ca' }, []);
    await waitFor('the Certificate deleted', async () => !(await admin.find(Certificate.kind, { namespace, name: 'shop-tls' })));
    expect(await posted(namespace, 'DeleteCertificate')).toEqual(['Successfully deleted unrequired Certificate "shop-tls"']);
  });

  it('says what is wrong on the Ingress, and never takes over a Certificate it does not control', async () => {
    const namespace = await ns();
    await caIssuer(namespace);
    await ingress(namespace, { 'cert-manager.io/issuer': 'ca', 'cert-manager.io/usages': 'server auth,teleport' }, [
      { hosts: ['bad.example.com'], secretName: 'bad-tls' },
    ]);
    await waitFor('a BadConfig event', async () => (await events(namespace, 'BadConfig')).some((m) => m?.includes('unknown usage "teleport"')));
    expect(await admin.find(Certificate.kind, { namespace, name: 'bad-tls' })).toBeUndefined();

    await apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'Certificate',
      metadata: { name: 'mine-tls', namespace },
      spec: { secretName: 'mine-tls', dnsNames: ['mine.example.com'], issuerRef: { name: 'ca' } },
    });
    const mine = await readyCert(namespace, 'mine-tls');
    await ingress(namespace, { 'cert-manager.io/issuer': 'ca' }, [{ hosts: ['other.example.com'], secretName: 'mine-tls' }]);
    await waitFor('the refusal said', async () =>
      (await events(namespace, 'BadConfig')).some((m) => m === 'Certificate "mine-tls" already exists and is not controlled by this Ingress: left as it is'),
    );
    const after = await admin.get(Certificate.kind, { namespace, name: 'mine-tls' });
    expect(after.spec.dnsNames).toEqual(['mine.example.com']);
    expect(after.metadata.resourceVersion).toBe(mine.metadata.resourceVersion);
  });
});
