import { Client, CoreEvent, CustomResourceDefinition, Transport, type Manager } from '@opkit/runtime';
import { testManager } from '@opkit/runtime/testing';
import { gatewayApiCrds, kubectlApply, startControlPlane, waitFor, type ControlPlane } from '@opkit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../config.js';
import { CUSTOM_RESOURCES } from '../../manifests/generate.js';
import { addCertificateControllers } from '../index.js';
import { CERT_APIS } from '../../api/index.js';

const { Certificate, Issuer } = CERT_APIS.opkit;

describe("gateway-shim against a real API server, with the Gateway API's published CRDs", () => {
  let plane: ControlPlane;
  let admin: Client;
  let manager: Manager;
  const apply = (obj: object) => plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify(obj) });
  const NS = 'edge';

  beforeAll(async () => {
    plane = await startControlPlane();
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
    for (const r of CUSTOM_RESOURCES) await admin.create(CustomResourceDefinition, r.crd as never);
    await kubectlApply(plane.kubeconfigPath, (await gatewayApiCrds()).join('\n---\n'));
    await waitFor('CRDs served', async () => (await plane.kubectl(['get', 'gateways,certificates', '-A'], { check: false })).code === 0);
    for (const ns of ['opkit-system', NS]) await plane.kubectl(['create', 'namespace', ns]);
    manager = testManager(plane.kubeConfig, { name: 'cert-operator' }).manager;
    addCertificateControllers(manager, defaultConfig({ clusterResourceNamespace: 'opkit-system', enableGatewayAPI: true }));
    await manager.start();
    await apply({ apiVersion: 'cert.opkit.dev/v1', kind: 'Issuer', metadata: { name: 'selfsigned', namespace: NS }, spec: { selfSigned: {} } });
    await waitFor(
      'the issuer Ready',
      async () => (await admin.get(Issuer.kind, { namespace: NS, name: 'selfsigned' })).status?.conditions?.[0]?.status === 'True',
    );
  });
  afterAll(async () => {
    await manager?.stop();
    await plane?.stop();
  });

  it('an annotated Gateway gets a Ready Certificate per Secret its TLS listeners name, removed with the listener', async () => {
    const listeners = [
      { name: 'shop', hostname: 'shop.example.com', port: 443, protocol: 'HTTPS', tls: { mode: 'Terminate', certificateRefs: [{ name: 'shop-tls' }] } },
      { name: 'www', hostname: 'www.shop.example.com', port: 443, protocol: 'HTTPS', tls: { mode: 'Terminate', certificateRefs: [{ name: 'shop-tls' }] } },
      { name: 'http', hostname: 'shop.example.com', port: 80, protocol: 'HTTP' },
    ];
    const gw = (ls: object[]) =>
      apply({
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'Gateway',
        metadata: { name: 'public', namespace: NS, annotations: { 'cert-manager.io/issuer': 'selfsigned' } },
        spec: { gatewayClassName: 'traefik', listeners: ls },
      });
    await gw(listeners);
    const c = await waitFor(
      'the Certificate Ready',
      async () => {
        const x = await admin.find(Certificate.kind, { namespace: NS, name: 'shop-tls' });
        return x?.status?.conditions?.some((k) => k.type === 'Ready' && k.status === 'True') && x;
      },
      { timeoutMs: 30_000 },
    );
    expect(c.spec.dnsNames).toEqual(['shop.example.com', 'www.shop.example.com']);
    expect(c.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Gateway', name: 'public' });
    const events = async (reason: string) =>
      (await admin.list(CoreEvent, { namespace: NS, fieldSelector: `involvedObject.kind=Gateway,reason=${reason}` })).items.map((e) => e.message);
    // Events are posted after the write they report, asynchronously: wait for the first.
    await waitFor('a CreateCertificate event', async () => (await events('CreateCertificate')).length > 0);
    expect(await events('CreateCertificate')).toEqual(['Successfully created Certificate "shop-tls"']);
    await gw([listeners[2]!]);
    await waitFor('the Certificate deleted with its listeners', async () => !(await admin.find(Certificate.kind, { namespace: NS, name: 'shop-tls' })));

    // A listener that cannot be served (its Secret in another namespace): a BadConfig
    // Warning on the Gateway, naming the field, and no Certificate for it.
    await gw([
      ...listeners.slice(0, 1),
      {
        name: 'other',
        hostname: 'other.example.com',
        port: 8443,
        protocol: 'HTTPS',
        tls: { mode: 'Terminate', certificateRefs: [{ name: 'other-tls', namespace: 'elsewhere' }] },
      },
    ]);
    const bad = await waitFor('a BadConfig Warning', async () => (await events('BadConfig')).find((m) => m?.includes('cross-namespace')), {
      timeoutMs: 30_000,
    });
    expect(bad).toMatch(
      /spec\.listeners\[1\]\.tls\.certificateRef\[0\]\.namespace: Invalid value: "elsewhere": cross-namespace secret references are not allowed in listeners/,
    );
    await waitFor('the good listener still served', async () => !!(await admin.find(Certificate.kind, { namespace: NS, name: 'shop-tls' })), {
      timeoutMs: 30_000,
    });
    expect(await admin.find(Certificate.kind, { namespace: NS, name: 'other-tls' })).toBeUndefined();
  });
});
