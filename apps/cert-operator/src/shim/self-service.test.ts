import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { GatewayObject } from './gateway.js';
import { gatewayPlan, listenerName, parentGateways, selfServiceSecretName, type HTTPRouteObject } from './self-service.js';
import { SELF_SERVICE } from './self-service-policy.js';

const gateway = (listeners: GatewayObject['spec']['listeners'] = [], annotations: Record<string, string> = policy): GatewayObject => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'Gateway',
  metadata: { name: 'public', namespace: 'infra', annotations },
  spec: { gatewayClassName: 'traefik', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }, ...listeners] },
});
const policy = {
  [SELF_SERVICE.namespaces]: 'tenant=true',
  [SELF_SERVICE.hostnames]: '*.apps.example.com',
  [SELF_SERVICE.issuers]: 'ClusterIssuer/letsencrypt',
};
let age = 0;
const route = (namespace: string, name: string, hostnames: string[], over: Partial<HTTPRouteObject['metadata']> = {}): HTTPRouteObject => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'HTTPRoute',
  metadata: {
    name,
    namespace,
    creationTimestamp: `2026-11-27T10:00:${String(++age).padStart(2, '0')}Z`,
    annotations: { 'cert.opkit.dev/cluster-issuer': 'letsencrypt' },
    ...over,
  },
  spec: { parentRefs: [{ name: 'public', namespace: 'infra' }], hostnames },
});
const tenants = (ns: string): Record<string, string> => (ns.startsWith('team') ? { tenant: 'true' } : {});

describe('gatewayPlan (Gateway API self-service)', () => {
  it("gives an allowed route a listener per hostname, referring to the Secret in the route's namespace, open to that namespace only", () => {
    const r = route('team-a', 'shop', ['shop.apps.example.com', 'www.apps.example.com']);
    const plan = gatewayPlan(gateway(), [r], tenants);
    expect(plan.routes.get('team-a/shop')).toEqual({
      hostnames: ['shop.apps.example.com', 'www.apps.example.com'],
      issuer: { kind: 'ClusterIssuer', name: 'letsencrypt' },
      refused: [],
    });
    expect(plan.listeners.map((l) => l.hostname).sort()).toEqual(['shop.apps.example.com', 'www.apps.example.com']);
    expect(plan.listeners[0]).toMatchObject({
      port: 443,
      protocol: 'HTTPS',
      tls: { mode: 'Terminate', certificateRefs: [{ kind: 'Secret', name: 'shop-tls', namespace: 'team-a' }] },
      allowedRoutes: { namespaces: { from: 'Selector', selector: { matchLabels: { 'kubernetes.io/metadata.name': 'team-a' } } } },
    });
  });

  it.each<[string, HTTPRouteObject, RegExp]>([
    ['a namespace the policy does not select', route('other', 'shop', ['shop.apps.example.com']), /this namespace is not one Gateway infra\/public offers/],
    ['a hostname outside the policy', route('team-a', 'shop', ['shop.example.org']), /does not offer certificates for shop\.example\.org/],
    [
      'an issuer the policy does not offer',
      route('team-a', 'shop', ['shop.apps.example.com'], { annotations: { 'cert.opkit.dev/issuer': 'mine' } }),
      /does not offer self-service through Issuer "mine"/,
    ],
    [
      'both issuer annotations',
      route('team-a', 'shop', ['shop.apps.example.com'], { annotations: { 'cert.opkit.dev/issuer': 'a', 'cert.opkit.dev/cluster-issuer': 'b' } }),
      /the route's issuer annotations: both/,
    ],
    ['a wildcard hostname', route('team-a', 'shop', ['*.apps.example.com']), /is a wildcard, which HTTP-01 cannot prove/],
  ])('refuses %s, with a reason and no listener', (_name, r, why) => {
    const plan = gatewayPlan(gateway(), [r], tenants);
    expect(plan.routes.get(`${r.metadata.namespace}/${r.metadata.name}`)).toEqual({ refused: [expect.stringMatching(why)] });
    expect(plan.listeners).toEqual([]);
  });

  it('refuses every route on a Gateway without a policy', () => {
    const plan = gatewayPlan(gateway([], {}), [route('team-a', 'shop', ['shop.apps.example.com'])], tenants);
    expect(plan.routes.get('team-a/shop')).toEqual({ refused: [expect.stringMatching(/does not offer self-service certificates/)] });
  });

  it('gives a hostname to the route that asked first; the other is told who holds it', () => {
    const first = route('team-a', 'shop', ['shop.apps.example.com']);
    const second = route('team-b', 'copy', ['shop.apps.example.com', 'copy.apps.example.com']);
    // The order the cache lists them in does not matter.
    const plan = gatewayPlan(gateway(), [second, first], tenants);
    expect(plan.routes.get('team-a/shop')).toMatchObject({ hostnames: ['shop.apps.example.com'], refused: [] });
    expect(plan.routes.get('team-b/copy')).toMatchObject({
      hostnames: ['copy.apps.example.com'],
      refused: ['shop.apps.example.com is self-served on Gateway infra/public by route team-a/shop, which asked first'],
    });
    expect(plan.listeners.map((l) => [l.hostname, l.tls.certificateRefs[0]!.namespace])).toEqual(
      expect.arrayContaining([
        ['shop.apps.example.com', 'team-a'],
        ['copy.apps.example.com', 'team-b'],
      ]),
    );
    expect(plan.listeners).toHaveLength(2);
  });

  it('gives a namespace no more listeners than the policy allows, and never more than the Gateway holds: no tenant fills it for the others', () => {
    const many = (ns: string, n: number) =>
      route(
        ns,
        `r-${ns}`,
        Array.from({ length: n }, (_, i) => `h${i}.${ns}.apps.example.com`),
      );
    const capped = gatewayPlan(gateway([], { ...policy, [SELF_SERVICE.listenersPerNamespace]: '3' }), [many('team-a', 5), many('team-b', 2)], tenants);
    expect(capped.routes.get('team-a/r-team-a')).toMatchObject({
      hostnames: ['h0.team-a.apps.example.com', 'h1.team-a.apps.example.com', 'h2.team-a.apps.example.com'],
    });
    expect(capped.routes.get('team-a/r-team-a')?.refused).toEqual([
      expect.stringMatching(/^h3\.team-a\.apps\.example\.com: this namespace has the 3 listeners Gateway infra\/public allows a namespace$/),
      expect.stringMatching(/^h4/),
    ]);
    expect(capped.routes.get('team-b/r-team-b')).toMatchObject({ refused: [] });
    // 64 listeners at most: the platform team's own (here 1) and every tenant's.
    const teams = Array.from({ length: 10 }, (_, i) => many(`team-${i}`, 8));
    const full = gatewayPlan(gateway(), teams, tenants);
    expect(full.listeners).toHaveLength(63);
    expect(full.routes.get('team-7/r-team-7')?.refused).toEqual([
      expect.stringMatching(/^h7\.team-7\.apps\.example\.com: Gateway infra\/public has no room for another listener \(64 at most\)$/),
    ]);
  });

  it("leaves a hostname the platform team's own HTTPS listener serves to that listener", () => {
    const gw = gateway([{ name: 'shop-https', hostname: 'shop.apps.example.com', port: 443, protocol: 'HTTPS', tls: { certificateRefs: [{ name: 'x' }] } }]);
    const plan = gatewayPlan(gw, [route('team-a', 'shop', ['shop.apps.example.com'])], tenants);
    expect(plan.routes.get('team-a/shop')).toEqual({ refused: [expect.stringMatching(/served by listener shop-https of Gateway infra\/public/)] });
  });

  it("makes its listeners on the policy's port (Traefik's HTTPS entry point is 8443), where only the platform team's listeners on that port hold a hostname", () => {
    const gw = gateway([{ name: 'shop-https', hostname: 'shop.apps.example.com', port: 443, protocol: 'HTTPS', tls: { certificateRefs: [{ name: 'x' }] } }], {
      ...policy,
      [SELF_SERVICE.port]: '8443',
    });
    const plan = gatewayPlan(gw, [route('team-a', 'shop', ['shop.apps.example.com'])], tenants);
    expect(plan.routes.get('team-a/shop')).toMatchObject({ hostnames: ['shop.apps.example.com'], refused: [] });
    expect(plan.listeners).toEqual([expect.objectContaining({ hostname: 'shop.apps.example.com', port: 8443, protocol: 'HTTPS' })]);
  });

  it('ignores routes that do not ask, or that name another Gateway', () => {
    const quiet = route('team-a', 'quiet', ['q.apps.example.com'], { annotations: {} });
    const elsewhere = {
      ...route('team-a', 'else', ['e.apps.example.com']),
      spec: { parentRefs: [{ name: 'internal', namespace: 'infra' }], hostnames: ['e.apps.example.com'] },
    };
    const plan = gatewayPlan(gateway(), [quiet, elsewhere], tenants);
    expect([...plan.routes.keys()]).toEqual([]);
    expect(plan.listeners).toEqual([]);
  });

  it('is the same plan whatever order the routes come in (both controllers read it)', () => {
    const rs = [
      route('team-a', 'a', ['x.apps.example.com']),
      route('team-b', 'b', ['x.apps.example.com', 'y.apps.example.com']),
      route('team-c', 'c', ['y.apps.example.com']),
    ];
    const one = gatewayPlan(gateway(), rs, tenants);
    const other = gatewayPlan(gateway(), [...rs].reverse(), tenants);
    expect(other.listeners).toEqual(one.listeners);
    expect([...other.routes].sort()).toEqual([...one.routes].sort());
  });
});

describe('gatewayPlan with ListenerSets (the Gateway admits them from the namespace)', () => {
  const admitting = (from: NonNullable<NonNullable<GatewayObject['spec']['allowedListeners']>['namespaces']>): GatewayObject => ({
    ...gateway(),
    spec: { ...gateway().spec, allowedListeners: { namespaces: from } },
  });

  it("puts an admitted namespace's listeners in a ListenerSet of its own, using its Secret without a grant, and none on the Gateway", () => {
    const gw = admitting({ from: 'Selector', selector: { matchLabels: { tenant: 'true' } } });
    const plan = gatewayPlan(gw, [route('team-a', 'shop', ['shop.apps.example.com', 'www.apps.example.com'])], tenants, { listenerSets: true });
    expect(plan.listeners).toEqual([]);
    const verdict = plan.routes.get('team-a/shop');
    expect(verdict).toMatchObject({ hostnames: ['shop.apps.example.com', 'www.apps.example.com'], refused: [] });
    expect(verdict?.listenerSet).toMatchObject({
      kind: 'ListenerSet',
      metadata: { name: 'shop-public-https', namespace: 'team-a' },
      spec: { parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra', name: 'public' } },
    });
    expect(verdict?.listenerSet?.spec.listeners.map((l) => l.hostname).sort()).toEqual(['shop.apps.example.com', 'www.apps.example.com']);
    expect(verdict?.listenerSet?.spec.listeners[0]).toMatchObject({
      port: 443,
      protocol: 'HTTPS',
      tls: { mode: 'Terminate', certificateRefs: [{ group: '', kind: 'Secret', name: 'shop-tls' }] },
      allowedRoutes: { namespaces: { from: 'Same' } },
    });
    expect(verdict?.listenerSet?.spec.listeners[0]!.tls!.certificateRefs![0]).not.toHaveProperty('namespace');
  });

  it.each<[string, Parameters<typeof admitting>[0] | undefined, boolean]>([
    ['no allowedListeners (Gateway API: none)', undefined, false],
    ['from None', { from: 'None' }, false],
    ['from Same, another namespace', { from: 'Same' }, false],
    ['from Selector without a selector', { from: 'Selector' }, false],
    ['from Selector, not selected', { from: 'Selector', selector: { matchLabels: { gold: 'true' } } }, false],
    ['from All', { from: 'All' }, true],
  ])('%s: in a ListenerSet %s', (_, from, inSet) => {
    const gw = from ? admitting(from) : gateway();
    const plan = gatewayPlan(gw, [route('team-a', 'shop', ['shop.apps.example.com'])], tenants, { listenerSets: true });
    expect(!!plan.routes.get('team-a/shop')?.listenerSet).toBe(inSet);
    expect(plan.listeners).toHaveLength(inSet ? 0 : 1);
  });

  it('keeps Gateway listeners when the operator runs without ListenerSets, whatever the Gateway admits', () => {
    const plan = gatewayPlan(admitting({ from: 'All' }), [route('team-a', 'shop', ['shop.apps.example.com'])], tenants);
    expect(plan.routes.get('team-a/shop')?.listenerSet).toBeUndefined();
    expect(plan.listeners).toHaveLength(1);
  });

  it('still gives a hostname to the route that asked first, and holds a namespace to its listener limit', () => {
    const gw = { ...admitting({ from: 'All' }), metadata: { ...gateway().metadata, annotations: { ...policy, [SELF_SERVICE.listenersPerNamespace]: '1' } } };
    const first = route('team-a', 'shop', ['shop.apps.example.com']);
    const second = route('team-b', 'copy', ['shop.apps.example.com', 'copy.apps.example.com', 'more.apps.example.com']);
    const plan = gatewayPlan(gw, [second, first], tenants, { listenerSets: true });
    expect(plan.routes.get('team-b/copy')).toMatchObject({
      hostnames: ['copy.apps.example.com'],
      refused: [
        'shop.apps.example.com is self-served on Gateway infra/public by route team-a/shop, which asked first',
        'more.apps.example.com: this namespace has the 1 listeners Gateway infra/public allows a namespace',
      ],
    });
    expect(plan.routes.get('team-b/copy')?.listenerSet?.spec.listeners.map((l) => l.hostname)).toEqual(['copy.apps.example.com']);
  });

  it("is not bounded by the Gateway's 64 listeners (the implementation merges and bounds ListenerSets)", () => {
    const teams = Array.from({ length: 10 }, (_, i) =>
      route(
        `team-${i}`,
        'r',
        Array.from({ length: 8 }, (_, j) => `h${j}.team-${i}.apps.example.com`),
      ),
    );
    const plan = gatewayPlan(admitting({ from: 'All' }), teams, tenants, { listenerSets: true });
    expect([...plan.routes.values()].every((v) => v.refused.length === 0 && v.listenerSet?.spec.listeners.length === 8)).toBe(true);
  });
});

describe('names', () => {
  it('a listener name is a DNS label of at most 63 characters, distinct per route and hostname', () => {
    const long = route('team-a', 'r'.repeat(200), ['a-very-long-hostname-that-goes-on.and-on-and-on.apps.example.com']);
    const n = listenerName(long, long.spec!.hostnames![0]!);
    expect(n).toMatch(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/);
    expect(n).not.toBe(listenerName(route('team-b', long.metadata.name, []), long.spec!.hostnames![0]!));
  });
  it("a route's Secret name fits a name's length", () => {
    expect(selfServiceSecretName(route('team-a', 'r'.repeat(253), []))).toHaveLength(253);
  });
  it('parent Gateways: the Gateway kind and the route namespace by default; other kinds ignored', () => {
    const r = {
      ...route('team-a', 'x', []),
      spec: { parentRefs: [{ name: 'gw' }, { name: 'svc', kind: 'Service', group: '' }, { name: 'gw', namespace: 'team-a', sectionName: 'https' }] },
    };
    expect(parentGateways(r)).toEqual([{ namespace: 'team-a', name: 'gw' }]);
  });
});

describe('gatewayPlan: what no mix of tenants can break (properties)', () => {
  it('one route per hostname, each namespace within its share, the Gateway within 64, only what the policy offers, whatever order the routes come in', () => {
    const namespaces = ['team-a', 'team-b', 'team-c', 'other'];
    const hosts = ['a', 'b', 'c', 'd', 'e'].map((h) => `${h}.apps.example.com`).concat(['x.example.org']);
    const routeArb = fc.record({
      ns: fc.constantFrom(...namespaces),
      name: fc.constantFrom('r1', 'r2', 'r3'),
      hostnames: fc.uniqueArray(fc.constantFrom(...hosts), { maxLength: 4 }),
      second: fc.integer({ min: 0, max: 59 }),
      asks: fc.boolean(),
    });
    const arb = fc.record({
      routes: fc.uniqueArray(routeArb, { maxLength: 8, selector: (r) => `${r.ns}/${r.name}` }),
      perNamespace: fc.integer({ min: 0, max: 8 }),
      platform: fc.integer({ min: 0, max: 63 }),
      from: fc.constantFrom(undefined, 'All', 'Same', 'None', 'Selector'),
      listenerSets: fc.boolean(),
      seed: fc.integer(),
    });
    fc.assert(
      fc.property(arb, ({ routes, perNamespace, platform, from, listenerSets, seed }) => {
        const theirs = Array.from({ length: platform }, (_, i) => ({ name: `p${i}`, port: 8080 + i, protocol: 'HTTP' }));
        const gw = gateway(theirs, { ...policy, [SELF_SERVICE.listenersPerNamespace]: String(perNamespace) });
        if (from) gw.spec.allowedListeners = { namespaces: from === 'Selector' ? { from, selector: { matchLabels: { tenant: 'true' } } } : { from } };
        const objs = routes.map((r) =>
          route(r.ns, r.name, r.hostnames, {
            creationTimestamp: `2026-11-27T10:00:${String(r.second).padStart(2, '0')}Z`,
            annotations: r.asks ? { 'cert.opkit.dev/cluster-issuer': 'letsencrypt' } : {},
          }),
        );
        const plan = gatewayPlan(gw, objs, tenants, { listenerSets });
        // The same plan whatever order the cache lists the routes in.
        const turn = objs.length ? Math.abs(seed) % objs.length : 0;
        const shuffled = [...objs.slice(turn), ...objs.slice(0, turn)].reverse();
        const again = gatewayPlan(gw, shuffled, tenants, { listenerSets });
        expect(again.listeners).toEqual(plan.listeners);
        expect(new Map([...again.routes].sort())).toEqual(new Map([...plan.routes].sort()));

        const holder = new Map<string, string>();
        const perNs = new Map<string, number>();
        for (const [key, v] of plan.routes) {
          const ns = key.split('/')[0]!;
          for (const h of v.hostnames ?? []) {
            expect(holder.get(h), `${h} granted twice`).toBeUndefined();
            holder.set(h, key);
            expect(h.endsWith('.apps.example.com')).toBe(true);
            expect(tenants(ns).tenant).toBe('true');
            perNs.set(ns, (perNs.get(ns) ?? 0) + 1);
          }
          // A route's listeners are all in one place: its ListenerSet, or the Gateway.
          const onGateway = plan.listeners.filter(
            (l) => l.tls.certificateRefs[0]!.namespace === ns && l.tls.certificateRefs[0]!.name === `${key.split('/')[1]}-tls`,
          );
          if (v.listenerSet) {
            expect(listenerSets).toBe(true);
            expect(onGateway).toEqual([]);
            expect(v.listenerSet.spec.listeners.map((l) => l.hostname).sort()).toEqual([...v.hostnames!].sort());
            expect(v.listenerSet.metadata.namespace).toBe(ns);
          } else expect(onGateway.map((l) => l.hostname).sort()).toEqual([...(v.hostnames ?? [])].sort());
        }
        for (const n of perNs.values()) expect(n).toBeLessThanOrEqual(perNamespace);
        expect(plan.listeners.length + platform + 1).toBeLessThanOrEqual(64);
        expect(new Set(plan.listeners.map((l) => l.name)).size).toBe(plan.listeners.length);
      }),
      { numRuns: 1_000 },
    );
  });
});
