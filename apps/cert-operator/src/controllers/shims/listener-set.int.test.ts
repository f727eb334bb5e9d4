import { Client, CoreEvent, CustomResourceDefinition, defineKind, Transport, type KubeObject, type Manager } from '@opkit/runtime';
import { testManager } from '@opkit/runtime/testing';
import { gatewayApiCrds, kubectlApply, startControlPlane, waitFor, type ControlPlane } from '@opkit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CERT_APIS } from '../../api/index.js';
import { SOLVER_OVERRIDES } from '../../acme/solver-overrides.js';
import { defaultConfig } from '../../config.js';
import { CUSTOM_RESOURCES } from '../../manifests/generate.js';
import { Gateway } from '../../shim/gateway.js';
import { ListenerSet } from '../../shim/listener-set.js';
import { SELF_SERVICE } from '../../shim/self-service-policy.js';
import { ReferenceGrant } from '../../shim/self-service.js';
import { addCertificateControllers } from '../index.js';
import { SELF_SERVICE_CONTROLLER } from './self-service.js';

const { Certificate, ClusterIssuer } = CERT_APIS.opkit;
type Route = KubeObject & {
  status?: { parents?: { controllerName: string; conditions: { type: string; status: string; message: string }[] }[] };
};
const HTTPRoute = defineKind<Route>({ group: 'gateway.networking.k8s.io', version: 'v1', kind: 'HTTPRoute', plural: 'httproutes', namespaced: true });

/**
 * Gateway API self-service through ListenerSets (Gateway API v1.5), against a real API server with
 * the published CRDs: a route's HTTPS listeners in a ListenerSet of its own where the Gateway admits
 * its namespace, and a team's own annotated ListenerSet given its Certificates, both within the
 * Gateway's policy; and back to Gateway listeners when the Gateway's owner stops admitting them.
 */
describe('Gateway API self-service with ListenerSets', () => {
  let plane: ControlPlane;
  let admin: Client;
  let manager: Manager;
  const apply = (obj: object, manager = 'kubectl') =>
    plane.kubectl(['apply', '--server-side', `--field-manager=${manager}`, '-f', '-'], { input: JSON.stringify(obj) });
  const policy = {
    [SELF_SERVICE.namespaces]: 'tenant=true',
    [SELF_SERVICE.hostnames]: '*.apps.example.com',
    [SELF_SERVICE.issuers]: 'ClusterIssuer/platform',
  };
  const gateway = (allowedListeners: object | undefined) =>
    apply(
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'Gateway',
        metadata: { name: 'public', namespace: 'infra', annotations: policy },
        spec: {
          gatewayClassName: 'traefik',
          listeners: [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }],
          ...(allowedListeners ? { allowedListeners } : {}),
        },
      },
      'platform-team',
    );
  const route = (namespace: string, name: string, hostnames: string[], extraParents: object[] = []) =>
    apply({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name, namespace, annotations: { 'cert.opkit.dev/cluster-issuer': 'platform' } },
      spec: { parentRefs: [{ name: 'public', namespace: 'infra' }, ...extraParents], hostnames, rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] },
    });
  const teamListenerSet = (namespace: string, name: string, hostname: string, secret: string) =>
    apply({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'ListenerSet',
      metadata: { name, namespace, annotations: { 'cert.opkit.dev/cluster-issuer': 'platform' } },
      spec: {
        parentRef: { name: 'public', namespace: 'infra' },
        listeners: [{ name: 'https', hostname, port: 443, protocol: 'HTTPS', tls: { mode: 'Terminate', certificateRefs: [{ name: secret }] } }],
      },
    });
  const verdict = async (namespace: string, name: string) =>
    (await admin.get(HTTPRoute, { namespace, name })).status?.parents?.find((p) => p.controllerName === SELF_SERVICE_CONTROLLER)?.conditions;
  const gatewayListeners = async () => (await admin.get(Gateway, { namespace: 'infra', name: 'public' })).spec.listeners ?? [];
  const ready = async (namespace: string, name: string) => {
    const c = await admin.find(Certificate.kind, { namespace, name });
    return c?.status?.conditions?.some((k) => k.type === 'Ready' && k.status === 'True') && c;
  };

  beforeAll(async () => {
    plane = await startControlPlane();
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
    for (const r of CUSTOM_RESOURCES) await admin.create(CustomResourceDefinition, r.crd as never);
    await kubectlApply(
      plane.kubeconfigPath,
      (await gatewayApiCrds(['gatewayclasses', 'gateways', 'httproutes', 'referencegrants', 'listenersets'])).join('\n---\n'),
    );
    await waitFor(
      'CRDs served',
      async () => (await plane.kubectl(['get', 'gateways,httproutes,referencegrants,listenersets,certificates', '-A'], { check: false })).code === 0,
    );
    for (const ns of ['opkit-system', 'infra', 'team-a', 'team-b', 'outsider']) await plane.kubectl(['create', 'namespace', ns]);
    for (const ns of ['team-a', 'team-b']) await plane.kubectl(['label', 'namespace', ns, 'tenant=true']);
    manager = testManager(plane.kubeConfig, { name: 'cert-operator' }).manager;
    addCertificateControllers(
      manager,
      defaultConfig({ clusterResourceNamespace: 'opkit-system', enableGatewayAPI: true, gatewaySelfService: true, gatewayListenerSets: true }),
    );
    await manager.start();
    await apply({ apiVersion: 'cert.opkit.dev/v1', kind: 'ClusterIssuer', metadata: { name: 'platform' }, spec: { selfSigned: {} } });
    await waitFor(
      'the ClusterIssuer Ready',
      async () => (await admin.get(ClusterIssuer.kind, { name: 'platform' })).status?.conditions?.[0]?.status === 'True',
    );
    // The platform team admits ListenerSets from the tenants' namespaces (Gateway API's default: none).
    await gateway({ namespaces: { from: 'Selector', selector: { matchLabels: { tenant: 'true' } } } });
  });
  afterAll(async () => {
    await manager?.stop();
    await plane?.stop();
  });

  it("puts an admitted route's HTTPS listener in a ListenerSet of its own, using its Secret with no grant, and leaves the Gateway as its owner wrote it", async () => {
    await route('team-a', 'shop', ['shop.apps.example.com']);
    const c = await waitFor('the Certificate Ready', () => ready('team-a', 'shop-tls'), { timeoutMs: 30_000 });
    expect(c.spec.dnsNames).toEqual(['shop.apps.example.com']);
    const ls = await waitFor('the ListenerSet', () => admin.find(ListenerSet, { namespace: 'team-a', name: 'shop-public-https' }));
    expect(ls.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'HTTPRoute', name: 'shop', controller: true });
    expect(ls.spec.parentRef).toEqual({ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra', name: 'public' });
    expect(ls.spec.listeners).toEqual([
      expect.objectContaining({
        hostname: 'shop.apps.example.com',
        port: 443,
        protocol: 'HTTPS',
        tls: { mode: 'Terminate', certificateRefs: [{ group: '', kind: 'Secret', name: 'shop-tls' }] },
        allowedRoutes: { namespaces: { from: 'Same' }, kinds: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' }] },
      }),
    ]);
    expect(await admin.find(ReferenceGrant, { namespace: 'team-a', name: 'shop-gateway-tls' })).toBeUndefined();
    expect((await gatewayListeners()).map((l) => l.name)).toEqual(['http']);
    // Until the route names the ListenerSet, it is not served on it: the verdict says how.
    const told = await waitFor('the route told', async () => {
      const v = await verdict('team-a', 'shop');
      return v?.find((k) => k.type === 'CertificateReady')?.status === 'True' && v;
    });
    expect(told[0]).toMatchObject({
      type: 'SelfService',
      status: 'True',
      message:
        'certificate for shop.apps.example.com served by ListenerSet team-a/shop-public-https on Gateway infra/public; to be served on its HTTPS listeners the route names it in spec.parentRefs: {group: gateway.networking.k8s.io, kind: ListenerSet, name: shop-public-https}',
    });

    await route('team-a', 'shop', ['shop.apps.example.com'], [{ group: 'gateway.networking.k8s.io', kind: 'ListenerSet', name: 'shop-public-https' }]);
    await waitFor(
      'the verdict without the hint',
      async () =>
        (await verdict('team-a', 'shop'))?.[0]?.message ===
        'certificate for shop.apps.example.com served by ListenerSet team-a/shop-public-https on Gateway infra/public',
    );
  });

  it("gives a team's own annotated ListenerSet a Certificate per Secret, solved through the parent Gateway", async () => {
    await teamListenerSet('team-b', 'api', 'api.apps.example.com', 'api-tls');
    const c = await waitFor('the Certificate Ready', () => ready('team-b', 'api-tls'), { timeoutMs: 30_000 });
    expect(c.spec).toMatchObject({ secretName: 'api-tls', dnsNames: ['api.apps.example.com'], issuerRef: { kind: 'ClusterIssuer', name: 'platform' } });
    expect(c.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'ListenerSet', name: 'api', controller: true });
    expect(c.metadata.annotations).toMatchObject({
      [SOLVER_OVERRIDES.parentRefKind]: 'Gateway',
      [SOLVER_OVERRIDES.parentRefName]: 'public',
      [SOLVER_OVERRIDES.parentRefNamespace]: 'infra',
    });
  });

  it('refuses a ListenerSet from a namespace the Gateway does not admit, with the reason as an Event on it and no Certificate', async () => {
    await teamListenerSet('outsider', 'grab', 'grab.apps.example.com', 'grab-tls');
    const events = await waitFor('a Warning event', async () => {
      const e = (await admin.list(CoreEvent, { namespace: 'outsider' })).items.filter((x) => x.involvedObject.kind === 'ListenerSet');
      return e.length > 0 && e;
    });
    expect(events[0]).toMatchObject({
      type: 'Warning',
      message: expect.stringMatching(/Gateway infra\/public does not admit ListenerSets from this namespace/),
    });
    expect(await admin.find(Certificate.kind, { namespace: 'outsider', name: 'grab-tls' })).toBeUndefined();
  });

  it('when the Gateway stops admitting ListenerSets: the route gets a Gateway listener (and grant) instead, and the team ListenerSet loses its Certificate', async () => {
    await gateway(undefined);
    await waitFor('the route ListenerSet removed', async () => !(await admin.find(ListenerSet, { namespace: 'team-a', name: 'shop-public-https' })));
    await waitFor('a Gateway listener instead', async () => (await gatewayListeners()).some((l) => l.hostname === 'shop.apps.example.com'));
    await waitFor('the grant', () => admin.find(ReferenceGrant, { namespace: 'team-a', name: 'shop-gateway-tls' }));
    await waitFor(
      'the verdict',
      async () => (await verdict('team-a', 'shop'))?.[0]?.message === 'certificate for shop.apps.example.com served by Gateway infra/public',
    );
    await waitFor("the team ListenerSet's Certificate removed", async () => !(await admin.find(Certificate.kind, { namespace: 'team-b', name: 'api-tls' })));
    // The route's own Certificate stays: the same Secret serves the Gateway listener now.
    expect(await ready('team-a', 'shop-tls')).toBeTruthy();
  });
});
