import { describe, expect, it } from 'vitest';
import { planForGateway, type GatewayObject } from './gateway.js';

const gateway = (annotations: Record<string, string>, listeners: NonNullable<GatewayObject['spec']['listeners']>): GatewayObject =>
  ({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: 'public', namespace: 'edge', uid: 'g-1', annotations },
    spec: { gatewayClassName: 'traefik', listeners },
  }) as GatewayObject;
const https = (name: string, hostname: string | undefined, secret: string, extra: object = {}) => ({
  name,
  hostname,
  port: 443,
  protocol: 'HTTPS',
  tls: { mode: 'Terminate', certificateRefs: [{ name: secret, ...extra }] },
});

describe('gateway-shim: what an annotated Gateway asks for', () => {
  it('a Certificate per referenced Secret, with the hostnames of every listener using it; plain HTTP and Passthrough listeners ignored', () => {
    const plan = planForGateway(
      gateway({ 'cert-manager.io/cluster-issuer': 'le' }, [
        https('shop', 'shop.example.com', 'shop-tls'),
        https('www', 'www.shop.example.com', 'shop-tls'),
        https('api', 'api.example.com', 'api-tls'),
        { name: 'http', hostname: 'shop.example.com', port: 80, protocol: 'HTTP' },
        { name: 'db', hostname: 'db.example.com', port: 5432, protocol: 'TLS', tls: { mode: 'Passthrough' } },
      ]),
    );
    if (!('certificates' in plan)) throw new Error('no plan');
    expect(plan.skipped).toEqual([]);
    expect(plan.certificates.map((c) => [c.metadata.name, c.spec.dnsNames, c.spec.issuerRef.kind])).toEqual([
      ['shop-tls', ['shop.example.com', 'www.shop.example.com'], 'ClusterIssuer'],
      ['api-tls', ['api.example.com'], 'ClusterIssuer'],
    ]);
    expect(plan.certificates[0]?.metadata.ownerReferences[0]).toMatchObject({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      name: 'public',
      controller: true,
    });
    // The ACME solver's HTTPRoute attaches to this Gateway.
    expect(plan.certificates[0]?.metadata.annotations).toEqual({
      'acme.cert.opkit.dev/http01-override-parentref-kind': 'Gateway',
      'acme.cert.opkit.dev/http01-override-parentref-name': 'public',
    });
  });

  it.each([
    ['no hostname', https('x', undefined, 's'), /hostname: Required value/],
    ['a reference to another namespace', https('x', 'x.example.com', 's', { namespace: 'other' }), /cross-namespace secret references are not allowed/],
    ['a reference to something else than a Secret', https('x', 'x.example.com', 's', { kind: 'ConfigMap' }), /kind: Unsupported value: "ConfigMap"/],
  ])('skips a listener with %s, saying why', (_, l, want) => {
    const plan = planForGateway(gateway({ 'cert-manager.io/issuer': 'ca' }, [l]));
    if (!('certificates' in plan)) throw new Error('no plan');
    expect(plan.certificates).toEqual([]);
    expect(plan.skipped.join()).toMatch(want);
  });
});
