import { describe, expect, it } from 'vitest';
import { hostnameWithin, refusal, selfServicePolicy, SELF_SERVICE, type SelfServiceRequest } from './self-service-policy.js';

const gatewayAnnotations = {
  [SELF_SERVICE.namespaces]: 'tenant=true',
  [SELF_SERVICE.hostnames]: '*.apps.example.com, shop.example.com',
  [SELF_SERVICE.issuers]: 'ClusterIssuer/letsencrypt',
};
const ask = (over: Partial<SelfServiceRequest> = {}): SelfServiceRequest => ({
  namespaceLabels: { tenant: 'true' },
  hostnames: ['web.apps.example.com'],
  issuer: { kind: 'ClusterIssuer', name: 'letsencrypt' },
  ...over,
});

describe('hostnameWithin (a Gateway listener hostname match)', () => {
  it.each<[string, string, boolean]>([
    ['a.example.com', '*.example.com', true],
    ['a.b.example.com', '*.example.com', true],
    ['example.com', '*.example.com', false],
    ['notexample.com', '*.example.com', false],
    ['A.Example.com', '*.example.com', true],
    ['shop.example.com', 'shop.example.com', true],
    ['www.shop.example.com', 'shop.example.com', false],
  ])('%s within %s: %s', (h, p, want) => {
    expect(hostnameWithin(h, p)).toBe(want);
  });
});

describe('selfServicePolicy and refusal', () => {
  it.each<[string, Record<string, string> | undefined, SelfServiceRequest, RegExp | undefined]>([
    ['an allowed route', gatewayAnnotations, ask(), undefined],
    ['several hostnames, all allowed', gatewayAnnotations, ask({ hostnames: ['a.apps.example.com', 'shop.example.com'] }), undefined],
    ['a Gateway without a policy', {}, ask(), /does not offer self-service certificates \(its owner sets/],
    ['a namespace outside the selector', gatewayAnnotations, ask({ namespaceLabels: { tenant: 'false' } }), /this namespace is not one Gateway gw/],
    ['a namespace without labels', gatewayAnnotations, ask({ namespaceLabels: undefined }), /this namespace is not one/],
    [
      'a hostname outside',
      gatewayAnnotations,
      ask({ hostnames: ['web.apps.example.com', 'evil.example.org'] }),
      /does not offer certificates for evil\.example\.org \(it offers \*\.apps\.example\.com, shop\.example\.com\)/,
    ],
    ["the suffix's own name", gatewayAnnotations, ask({ hostnames: ['apps.example.com'] }), /does not offer certificates for apps\.example\.com/],
    ['a wildcard route hostname', gatewayAnnotations, ask({ hostnames: ['*.apps.example.com'] }), /is a wildcard, which HTTP-01 cannot prove/],
    ['no hostnames', gatewayAnnotations, ask({ hostnames: [] }), /names no hostnames/],
    [
      'another issuer',
      gatewayAnnotations,
      ask({ issuer: { kind: 'Issuer', name: 'letsencrypt' } }),
      /through Issuer "letsencrypt" \(it offers ClusterIssuer\/letsencrypt\)/,
    ],
    [
      'a selector that does not parse',
      { ...gatewayAnnotations, [SELF_SERVICE.namespaces]: 'tenant in (a' },
      ask(),
      /policy is written wrong, ask its owner: cert\.opkit\.dev\/self-service-namespaces:/,
    ],
    ['a hostname pattern written wrong', { ...gatewayAnnotations, [SELF_SERVICE.hostnames]: 'a..b' }, ask(), /"a\.\.b" is not a hostname or \*\.suffix/],
    ['no hostnames offered', { ...gatewayAnnotations, [SELF_SERVICE.hostnames]: ' , ' }, ask(), /names no hostname/],
    [
      'an issuer written wrong',
      { ...gatewayAnnotations, [SELF_SERVICE.issuers]: 'letsencrypt' },
      ask(),
      /"letsencrypt" is not Issuer\/<name> or ClusterIssuer\/<name>/,
    ],
    ['every namespace (an empty selector)', { ...gatewayAnnotations, [SELF_SERVICE.namespaces]: '' }, ask({ namespaceLabels: {} }), undefined],
    [
      'a listener limit that is not a number',
      { ...gatewayAnnotations, [SELF_SERVICE.listenersPerNamespace]: 'lots' },
      ask(),
      /self-service-listeners-per-namespace: "lots" is not a number from 0 to 64/,
    ],
    ['a listener limit past the Gateway', { ...gatewayAnnotations, [SELF_SERVICE.listenersPerNamespace]: '65' }, ask(), /"65" is not a number from 0 to 64/],
    ['a listener limit', { ...gatewayAnnotations, [SELF_SERVICE.listenersPerNamespace]: '2' }, ask(), undefined],
    ['a port', { ...gatewayAnnotations, [SELF_SERVICE.port]: '8443' }, ask(), undefined],
    ['a port that is not one', { ...gatewayAnnotations, [SELF_SERVICE.port]: '0443' }, ask(), /self-service-port: "0443" is not a port from 1 to 65535/],
    ['a port past 65535', { ...gatewayAnnotations, [SELF_SERVICE.port]: '65536' }, ask(), /"65536" is not a port/],
  ])('%s', (_name, annotations, req, want) => {
    const r = refusal(selfServicePolicy(annotations), 'gw', req);
    if (want) expect(r).toMatch(want);
    else expect(r).toBeUndefined();
  });
});
