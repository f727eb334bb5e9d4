import { Client, CoreEvent, CustomResourceDefinition, defineKind, Secret, Transport, type KubeObject, type Manager } from '@opkit/runtime';
import { testManager } from '@opkit/runtime/testing';
import { gatewayApiCrds, kubectlApply, startControlPlane, waitFor, type ControlPlane } from '@opkit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CERT_APIS } from '../../api/index.js';
import { defaultConfig } from '../../config.js';
import { CUSTOM_RESOURCES } from '../../manifests/generate.js';
import { Gateway } from '../../shim/gateway.js';
import { SELF_SERVICE } from '../../shim/self-service-policy.js';
import { addCertificateControllers } from '../index.js';
import { ReferenceGrant } from '../../shim/self-service.js';
import { SELF_SERVICE_CONTROLLER } from './self-service.js';

const { Certificate, ClusterIssuer } = CERT_APIS.opkit;
type Route = KubeObject & {
  status?: {
    parents?: { controllerName: string; parentRef: { name: string }; conditions: { type: string; status: string; reason: string; message: string }[] }[];
  };
};
const HTTPRoute = defineKind<Route>({ group: 'gateway.networking.k8s.io', version: 'v1', kind: 'HTTPRoute', plural: 'httproutes', namespaced: true });

/**
 * Gateway API self-service against a real API server with the Gateway API's published CRDs: what
 * the operator writes (Certificate, ReferenceGrant, listeners, the route's status) for routes the
 * Gateway's policy admits and refuses. Traffic through a Gateway implementation, and ACME HTTP-01
 * on the same parent, are the kind mode's (e2e).
 */
describe('Gateway API self-service: HTTPRoutes asking a Gateway for certificates', () => {
  let plane: ControlPlane;
  let admin: Client;
  let manager: Manager;
  const apply = (obj: object, manager = 'kubectl') =>
    plane.kubectl(['apply', '--server-side', `--field-manager=${manager}`, '-f', '-'], { input: JSON.stringify(obj) });
  const gateway = (annotations: Record<string, string>) =>
    apply(
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'Gateway',
        metadata: { name: 'public', namespace: 'infra', annotations },
        spec: {
          gatewayClassName: 'traefik',
          listeners: [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }],
        },
      },
      'platform-team',
    );
  const policy = {
    [SELF_SERVICE.namespaces]: 'tenant=true',
    [SELF_SERVICE.hostnames]: '*.apps.example.com',
    [SELF_SERVICE.issuers]: 'ClusterIssuer/platform',
  };
  const route = (namespace: string, name: string, hostnames: string[], annotations: Record<string, string> = { 'cert.opkit.dev/cluster-issuer': 'platform' }) =>
    apply({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name, namespace, annotations },
      spec: { parentRefs: [{ name: 'public', namespace: 'infra' }], hostnames, rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] },
    });
  const ours = async (namespace: string, name: string) =>
    (await admin.get(HTTPRoute, { namespace, name })).status?.parents?.find((p) => p.controllerName === SELF_SERVICE_CONTROLLER);
  const listeners = async () => (await admin.get(Gateway, { namespace: 'infra', name: 'public' })).spec.listeners ?? [];

  beforeAll(async () => {
    plane = await startControlPlane();
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
    for (const r of CUSTOM_RESOURCES) await admin.create(CustomResourceDefinition, r.crd as never);
    await kubectlApply(plane.kubeconfigPath, (await gatewayApiCrds(['gatewayclasses', 'gateways', 'httproutes', 'referencegrants'])).join('\n---\n'));
    await waitFor(
      'CRDs served',
      async () => (await plane.kubectl(['get', 'gateways,httproutes,referencegrants,certificates', '-A'], { check: false })).code === 0,
    );
    await plane.kubectl(['create', 'namespace', 'opkit-system']);
    await plane.kubectl(['create', 'namespace', 'infra']);
    for (const ns of ['team-a', 'team-b', 'outsider']) {
      await plane.kubectl(['create', 'namespace', ns]);
      if (ns !== 'outsider') await plane.kubectl(['label', 'namespace', ns, 'tenant=true']);
    }
    manager = testManager(plane.kubeConfig, { name: 'cert-operator' }).manager;
    addCertificateControllers(manager, defaultConfig({ clusterResourceNamespace: 'opkit-system', enableGatewayAPI: true, gatewaySelfService: true }));
    await manager.start();
    await apply({ apiVersion: 'cert.opkit.dev/v1', kind: 'ClusterIssuer', metadata: { name: 'platform' }, spec: { selfSigned: {} } });
    await waitFor(
      'the ClusterIssuer Ready',
      async () => (await admin.get(ClusterIssuer.kind, { name: 'platform' })).status?.conditions?.[0]?.status === 'True',
    );
    await gateway(policy);
  });
  afterAll(async () => {
    await manager?.stop();
    await plane?.stop();
  });

  it("gives an admitted route a Ready Certificate, the grant the Gateway needs, and its own HTTPS listener; the platform team's listener untouched", async () => {
    await route('team-a', 'shop', ['shop.apps.example.com']);
    const c = await waitFor(
      'the Certificate Ready',
      async () => {
        const x = await admin.find(Certificate.kind, { namespace: 'team-a', name: 'shop-tls' });
        return x?.status?.conditions?.some((k) => k.type === 'Ready' && k.status === 'True') && x;
      },
      { timeoutMs: 30_000 },
    );
    expect(c.spec).toMatchObject({ secretName: 'shop-tls', dnsNames: ['shop.apps.example.com'], issuerRef: { kind: 'ClusterIssuer', name: 'platform' } });
    expect(c.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'HTTPRoute', name: 'shop', controller: true });
    expect(await admin.find(Secret, { namespace: 'team-a', name: 'shop-tls' })).toBeDefined();

    const grant = await waitFor('the ReferenceGrant', () => admin.find(ReferenceGrant, { namespace: 'team-a', name: 'shop-gateway-tls' }));
    expect(grant.spec).toEqual({
      from: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra' }],
      to: [{ group: '', kind: 'Secret', name: 'shop-tls' }],
    });

    const ls = await waitFor('the listener', async () => {
      const l = await listeners();
      return l.length === 2 && l;
    });
    expect(ls[0]).toEqual({ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } });
    expect(ls[1]).toMatchObject({
      name: expect.stringMatching(/^opkit-shop-apps-example-com-[0-9a-f]{10}$/),
      hostname: 'shop.apps.example.com',
      port: 443,
      protocol: 'HTTPS',
      tls: { mode: 'Terminate', certificateRefs: [{ kind: 'Secret', name: 'shop-tls', namespace: 'team-a' }] },
      allowedRoutes: { namespaces: { from: 'Selector', selector: { matchLabels: { 'kubernetes.io/metadata.name': 'team-a' } } } },
    });

    const verdict = await waitFor('the route told, with the certificate Ready', async () => {
      const p = await ours('team-a', 'shop');
      return p?.conditions.find((k) => k.type === 'CertificateReady')?.status === 'True' && p;
    });
    expect(verdict.parentRef).toMatchObject({ kind: 'Gateway', namespace: 'infra', name: 'public' });
    expect(verdict.conditions[0]).toMatchObject({
      type: 'SelfService',
      status: 'True',
      reason: 'Accepted',
      message: 'certificate for shop.apps.example.com served by Gateway infra/public',
    });

    // The platform team applies its Gateway again, as its repository has it: server-side apply
    // under its own field manager keeps the listeners this operator applied.
    await gateway(policy);
    await new Promise((r) => setTimeout(r, 1_000));
    expect((await listeners()).map((l) => l.name)).toEqual(['http', ls[1]!.name]);
  });

  it('refuses a namespace the policy does not admit, saying why on the route, with nothing made', async () => {
    await route('outsider', 'grab', ['grab.apps.example.com']);
    const p = await waitFor('the refusal on the route', () => ours('outsider', 'grab'));
    expect(p.conditions).toEqual([
      expect.objectContaining({
        type: 'SelfService',
        status: 'False',
        reason: 'Refused',
        message: 'refused: this namespace is not one Gateway infra/public offers self-service certificates to',
      }),
    ]);
    const events = await waitFor('a Warning event', async () => {
      const e = (await admin.list(CoreEvent, { namespace: 'outsider', fieldSelector: 'reason=SelfServiceRefused' })).items;
      return e.length > 0 && e;
    });
    expect(events[0]?.type).toBe('Warning');
    expect(await admin.find(Certificate.kind, { namespace: 'outsider', name: 'grab-tls' })).toBeUndefined();
    expect((await listeners()).some((l) => l.hostname === 'grab.apps.example.com')).toBe(false);
  });

  it("gives a hostname to the route that asked first; another team's route gets the rest, and is told", async () => {
    await route('team-b', 'copy', ['shop.apps.example.com', 'copy.apps.example.com']);
    const p = await waitFor('the verdict on the second route', () => ours('team-b', 'copy'));
    expect(p.conditions[0]).toMatchObject({
      status: 'True',
      message:
        'certificate for copy.apps.example.com served by Gateway infra/public; refused: shop.apps.example.com is self-served on Gateway infra/public by route team-a/shop, which asked first',
    });
    const c = await waitFor('its Certificate', () => admin.find(Certificate.kind, { namespace: 'team-b', name: 'copy-tls' }));
    expect(c.spec.dnsNames).toEqual(['copy.apps.example.com']);
    await waitFor('its listener', async () => (await listeners()).some((l) => l.hostname === 'copy.apps.example.com'));
    expect((await listeners()).filter((l) => l.hostname === 'shop.apps.example.com').map((l) => l.tls?.certificateRefs?.[0]?.namespace)).toEqual(['team-a']);
  });

  it('a route that stops asking: its Certificate, grant, listener and verdict go; the other routes keep theirs', async () => {
    await route('team-b', 'copy', ['shop.apps.example.com', 'copy.apps.example.com'], {});
    await waitFor('the Certificate removed', async () => !(await admin.find(Certificate.kind, { namespace: 'team-b', name: 'copy-tls' })));
    await waitFor('the grant removed', async () => !(await admin.find(ReferenceGrant, { namespace: 'team-b', name: 'copy-gateway-tls' })));
    await waitFor('the listener removed', async () => !(await listeners()).some((l) => l.hostname === 'copy.apps.example.com'));
    await waitFor('the verdict removed', async () => !(await ours('team-b', 'copy')));
    expect((await listeners()).map((l) => l.hostname ?? l.name).sort()).toEqual(['http', 'shop.apps.example.com']);
  });

  it('a Gateway whose owner withdraws the offer: every listener of this operator removed, the routes told', async () => {
    await gateway({});
    await waitFor('the listeners removed', async () => (await listeners()).length === 1);
    const p = await waitFor('the route told', async () => {
      const x = await ours('team-a', 'shop');
      return x?.conditions[0]?.status === 'False' && x;
    });
    expect(p.conditions[0]?.message).toMatch(/Gateway infra\/public does not offer self-service certificates/);
    await waitFor('its Certificate removed', async () => !(await admin.find(Certificate.kind, { namespace: 'team-a', name: 'shop-tls' })));
  });
});
