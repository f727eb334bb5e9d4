import { describe, expect, it } from 'vitest';
import { applySolverOverrides } from './solver-overrides.js';

const ingress = { http01: { ingress: { ingressClassName: 'nginx', serviceType: 'ClusterIP' as const } } };

describe("ACME solver overrides from a Certificate's annotations", () => {
  it.each([
    ["none: the issuer's solver as it is", {}, ingress],
    [
      "edit in place (ingress-shim's edit-in-place)",
      { 'acme.cert.opkit.dev/http01-override-ingress-name': 'web' },
      { http01: { ingress: { name: 'web', serviceType: 'ClusterIP' } } },
    ],
    [
      "a legacy class, cert-manager's annotation",
      { 'acme.cert-manager.io/http01-override-ingress-class': 'traefik' },
      { http01: { ingress: { class: 'traefik', serviceType: 'ClusterIP' } } },
    ],
    [
      'an IngressClass name',
      { 'acme.cert-manager.io/http01-override-ingress-ingressclassname': 'traefik' },
      { http01: { ingress: { ingressClassName: 'traefik', serviceType: 'ClusterIP' } } },
    ],
    [
      'the name wins over a class',
      { 'acme.cert.opkit.dev/http01-override-ingress-name': 'web', 'acme.cert.opkit.dev/http01-override-ingress-class': 'x' },
      { http01: { ingress: { name: 'web', serviceType: 'ClusterIP' } } },
    ],
    ['a Gateway parent does not touch an Ingress solver', { 'acme.cert.opkit.dev/http01-override-parentref-name': 'gw' }, ingress],
  ])('%s', (_, annotations, want) => {
    expect(applySolverOverrides(ingress, annotations)).toEqual(want);
  });

  it('points an HTTPRoute solver at the Gateway the shim read the Certificate from', () => {
    const route = { http01: { gatewayHTTPRoute: { parentRefs: [{ name: 'default-gw' }] } } };
    expect(
      applySolverOverrides(route, {
        'acme.cert.opkit.dev/http01-override-parentref-kind': 'Gateway',
        'acme.cert.opkit.dev/http01-override-parentref-name': 'shop-gw',
      }),
    ).toEqual({
      http01: { gatewayHTTPRoute: { parentRefs: [{ name: 'shop-gw', kind: 'Gateway', group: 'gateway.networking.k8s.io' }] } },
    });
  });

  it("names the parent's namespace when it is not the Certificate's (self-service on a platform team's Gateway), and a ListenerSet's group", () => {
    const route = { http01: { gatewayHTTPRoute: { parentRefs: [{ name: 'default-gw' }] } } };
    expect(
      applySolverOverrides(route, {
        'acme.cert.opkit.dev/http01-override-parentref-name': 'public',
        'acme.cert.opkit.dev/http01-override-parentref-namespace': 'infra',
      }).http01?.gatewayHTTPRoute?.parentRefs,
    ).toEqual([{ name: 'public', namespace: 'infra', kind: 'Gateway', group: 'gateway.networking.k8s.io' }]);
    expect(
      applySolverOverrides(route, {
        'acme.cert.opkit.dev/http01-override-parentref-kind': 'XListenerSet',
        'acme.cert.opkit.dev/http01-override-parentref-name': 'team-a',
      }).http01?.gatewayHTTPRoute?.parentRefs,
    ).toEqual([{ name: 'team-a', kind: 'XListenerSet', group: 'gateway.networking.x-k8s.io' }]);
  });
});
