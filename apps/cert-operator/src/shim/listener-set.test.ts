import { describe, expect, it } from 'vitest';
import { SOLVER_OVERRIDES } from '../acme/solver-overrides.js';
import type { GatewayObject } from './gateway.js';
import { planForListenerSet, type ListenerSetObject } from './listener-set.js';
import { SELF_SERVICE } from './self-service-policy.js';

const policy = {
  [SELF_SERVICE.namespaces]: 'tenant=true',
  [SELF_SERVICE.hostnames]: '*.apps.example.com',
  [SELF_SERVICE.issuers]: 'ClusterIssuer/letsencrypt',
};
const gateway = (over: Partial<GatewayObject['spec']> = { allowedListeners: { namespaces: { from: 'All' } } }, annotations = policy): GatewayObject => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'Gateway',
  metadata: { name: 'public', namespace: 'infra', annotations },
  spec: { gatewayClassName: 'traefik', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }], ...over },
});
const listenerSet = (
  listeners: ListenerSetObject['spec']['listeners'],
  annotations: Record<string, string> = { 'cert.opkit.dev/cluster-issuer': 'letsencrypt' },
): ListenerSetObject => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'ListenerSet',
  metadata: { name: 'shop', namespace: 'team-a', uid: 'u-1', annotations },
  spec: { parentRef: { name: 'public', namespace: 'infra' }, listeners },
});
const https = (hostname: string, secret: string, extra: object = {}) => ({
  name: hostname.split('.')[0]!,
  hostname,
  port: 443,
  protocol: 'HTTPS',
  tls: { mode: 'Terminate', certificateRefs: [{ name: secret, ...extra }] },
});
const tenant = { tenant: 'true' };

describe('planForListenerSet (a team annotates its own ListenerSet)', () => {
  it('makes a Certificate per Secret its TLS listeners name, with their hostnames, solved through the parent Gateway', () => {
    const plan = planForListenerSet(
      listenerSet([https('shop.apps.example.com', 'shop-tls'), https('www.apps.example.com', 'shop-tls'), https('api.apps.example.com', 'api-tls')]),
      gateway(),
      tenant,
    );
    if (!('certificates' in plan)) throw new Error(JSON.stringify(plan));
    expect(plan.secretNames).toEqual(['shop-tls', 'api-tls']);
    expect(plan.certificates[0]).toMatchObject({
      metadata: {
        name: 'shop-tls',
        namespace: 'team-a',
        ownerReferences: [{ kind: 'ListenerSet', name: 'shop', uid: 'u-1', controller: true }],
        annotations: {
          [SOLVER_OVERRIDES.parentRefKind]: 'Gateway',
          [SOLVER_OVERRIDES.parentRefName]: 'public',
          [SOLVER_OVERRIDES.parentRefNamespace]: 'infra',
        },
      },
      spec: { secretName: 'shop-tls', dnsNames: ['shop.apps.example.com', 'www.apps.example.com'], issuerRef: { name: 'letsencrypt', kind: 'ClusterIssuer' } },
    });
    expect(plan.skipped).toEqual([]);
  });

  it.each<[string, ListenerSetObject, GatewayObject | undefined, Record<string, string> | undefined, RegExp]>([
    ['a missing Gateway', listenerSet([https('shop.apps.example.com', 's')]), undefined, tenant, /^Gateway infra\/public does not exist$/],
    [
      'a Gateway that admits no ListenerSets (the default)',
      listenerSet([https('shop.apps.example.com', 's')]),
      gateway({}),
      tenant,
      /does not admit ListenerSets from this namespace/,
    ],
    [
      'a Gateway without a self-service policy',
      listenerSet([https('shop.apps.example.com', 's')]),
      gateway(undefined, {} as never),
      tenant,
      /does not offer self-service/,
    ],
    ['a namespace the policy does not offer', listenerSet([https('shop.apps.example.com', 's')]), gateway(), {}, /this namespace is not one/],
    ['a hostname outside the policy', listenerSet([https('shop.example.org', 's')]), gateway(), tenant, /does not offer certificates for shop\.example\.org/],
    [
      'an issuer outside the policy',
      listenerSet([https('shop.apps.example.com', 's')], { 'cert.opkit.dev/issuer': 'own' }),
      gateway(),
      tenant,
      /does not offer self-service through Issuer "own"/,
    ],
  ])('refuses %s, saying why, and makes nothing', (_, ls, gw, labels, why) => {
    const plan = planForListenerSet(ls, gw, labels);
    expect(plan).toEqual({ blocked: expect.stringMatching(why) });
  });

  it("skips a listener that names another namespace's Secret, saying why (a ListenerSet reads its own namespace only, here)", () => {
    const plan = planForListenerSet(listenerSet([https('shop.apps.example.com', 's', { namespace: 'infra' })]), gateway(), tenant);
    expect(plan).toMatchObject({ certificates: [], skipped: [expect.stringMatching(/cross-namespace secret references are not allowed/)] });
  });

  it('leaves a ListenerSet without the annotations alone', () => {
    expect(planForListenerSet(listenerSet([https('shop.apps.example.com', 's')], {}), gateway(), tenant)).toEqual({ skip: true });
  });
});
