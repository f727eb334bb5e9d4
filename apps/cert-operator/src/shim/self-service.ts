import { createHash } from 'node:crypto';
import { defineKind, type KubeObject } from '@opkit/runtime';
import { childName } from '../names.js';
import { hasShimTrigger, issuerFromAnnotations, shimReadable, type IssuerChoice, type ShimOptions } from './annotations.js';
import { GATEWAY_GROUP, parentOfKind, type GatewayObject } from './gateway.js';
import { admitsListenerSets, routeListenerSetName, type ListenerSetObject } from './listener-set.js';
import { DEFAULT_SELF_SERVICE_PORT, refusal, selfServicePolicy } from './self-service-policy.js';

/**
 * Gateway API self-service (issue 31): an application team annotates its own HTTPRoute with an
 * issuer (`cert.opkit.dev/issuer` or `cert.opkit.dev/cluster-issuer`, as on an Ingress); where the
 * route's parent Gateway offers self-service (self-service-policy.ts) the operator makes a
 * Certificate for the route's hostnames in the route's namespace, a ReferenceGrant there that lets
 * the Gateway read its Secret, and an HTTPS listener per hostname on the Gateway, server-side
 * applied under the operator's own field manager (the platform team's listeners are not touched).
 * The ACME HTTP-01 solver's route goes to the same Gateway. Everything else is refused, with the
 * reason on the route.
 *
 * Pure: the plan of one Gateway, from the Gateway and the routes naming it. The route controller
 * (its Certificate, grant and status) and the Gateway controller (its listeners) read the same
 * plan, so they agree on who got which hostname.
 */

/** Gateway API's ReferenceGrant (v1beta1: served from v0.6 on): lets a Gateway read a Secret in another namespace. */
export const ReferenceGrant = defineKind<
  KubeObject & {
    spec: { from: { group: string; kind: string; namespace: string }[]; to: { group: string; kind: string; name?: string }[] };
  }
>({ group: 'gateway.networking.k8s.io', version: 'v1beta1', kind: 'ReferenceGrant', plural: 'referencegrants', namespaced: true });

export interface RouteParentRef {
  group?: string;
  kind?: string;
  namespace?: string;
  name: string;
  sectionName?: string;
  port?: number;
}

export type HTTPRouteObject = KubeObject & {
  metadata: { name: string; namespace: string };
  spec?: { parentRefs?: RouteParentRef[]; hostnames?: string[] };
};

export interface SelfServiceListener {
  name: string;
  hostname: string;
  port: number;
  protocol: 'HTTPS';
  /** The Secret's namespace: on a Gateway's listener only (a ListenerSet's reads its own namespace). */
  tls: { mode: 'Terminate'; certificateRefs: { group: ''; kind: 'Secret'; name: string; namespace?: string }[] };
  allowedRoutes: {
    namespaces: { from: 'Selector'; selector: { matchLabels: Record<string, string> } } | { from: 'Same' };
    kinds: { group: string; kind: 'HTTPRoute' }[];
  };
}

/**
 * What one route gets on one Gateway: the hostnames it may have certified there (and, where their
 * listeners go in a ListenerSet rather than on the Gateway, that ListenerSet), or why not.
 */
export type RouteVerdict =
  | { hostnames: string[]; issuer: IssuerChoice; refused: string[]; listenerSet?: ListenerSetObject }
  | { refused: string[]; hostnames?: undefined; listenerSet?: undefined };

export interface GatewayPlan {
  /** This operator's listeners on the Gateway, in a stable order (none for routes served through ListenerSets). */
  listeners: SelfServiceListener[];
  /** Per route naming the Gateway and asking (`namespace/name`). */
  routes: Map<string, RouteVerdict>;
}

/** Gateway API's limit on a Gateway's listeners. */
export const MAX_LISTENERS = 64;
/** The prefix of this operator's listener names: a platform team's listener is never one of them. */
export const LISTENER_PREFIX = 'opkit-';

export const routeKey = (r: { metadata: { namespace: string; name: string } }) => `${r.metadata.namespace}/${r.metadata.name}`;

/** The Gateways a route names as parents (Gateway API's defaults: the Gateway kind, the route's namespace). */
export function parentGateways(route: HTTPRouteObject): { namespace: string; name: string }[] {
  const out = new Map<string, { namespace: string; name: string }>();
  for (const p of route.spec?.parentRefs ?? []) {
    const ref = parentOfKind(p, 'Gateway', route.metadata.namespace);
    if (ref) out.set(`${ref.namespace}/${ref.name}`, ref);
  }
  return [...out.values()];
}

/** Whether a route asks for self-service: the shim annotations, as an Ingress carries them. */
export const asksSelfService = (route: HTTPRouteObject, opts: ShimOptions = {}) => hasShimTrigger(shimReadable(route.metadata.annotations, opts));

/** The Secret (and Certificate) of a route's self-service certificate, in its namespace. */
export const selfServiceSecretName = (route: HTTPRouteObject) => childName(route.metadata.name, 'tls');

/** A listener name (a DNS label) for a route's hostname: stable, and short whatever the names. */
export function listenerName(route: HTTPRouteObject, hostname: string): string {
  const hash = createHash('sha256')
    .update(`${routeKey(route)}\n${hostname}`)
    .digest('hex')
    .slice(0, 10);
  return `${LISTENER_PREFIX}${hostname.replace(/\*/g, 'wildcard').replace(/\./g, '-').slice(0, 40).replace(/-+$/, '')}-${hash}`;
}

/**
 * The plan of a Gateway: for each route naming it and asking, in order of age (then name: the
 * first to ask keeps a hostname), the policy's verdict and the hostnames no other listener holds.
 * A hostname the platform team's own listener serves on the self-service port (443 unless the
 * policy names another) is left to that listener, said. With `listenerSets`, a route whose
 * namespace the Gateway admits ListenerSets from gets its listeners in a ListenerSet of its own
 * instead of on the Gateway; the per-namespace limit and who asked first hold all the same (the
 * Gateway's 64 do not: its implementation merges and bounds the ListenerSets' listeners).
 */
export function gatewayPlan(
  gateway: GatewayObject,
  routes: HTTPRouteObject[],
  namespaceLabels: (namespace: string) => Record<string, string> | undefined,
  opts: ShimOptions & { listenerSets?: boolean } = {},
): GatewayPlan {
  const gwName = `${gateway.metadata.namespace}/${gateway.metadata.name}`;
  const policy = selfServicePolicy(gateway.metadata.annotations);
  const port = typeof policy === 'object' ? policy.port : DEFAULT_SELF_SERVICE_PORT;
  const foreign = new Map<string, string>();
  const theirs = (gateway.spec.listeners ?? []).filter((l) => !l.name.startsWith(LISTENER_PREFIX));
  for (const l of theirs) if (l.hostname && l.port === port) foreign.set(l.hostname.toLowerCase(), l.name);
  // A Gateway holds 64 listeners at most, the platform team's among them: what is left is shared,
  // each namespace taking no more than the policy allows, so no tenant can fill it for the others.
  const room = MAX_LISTENERS - theirs.length;
  const perNamespace = new Map<string, number>();
  const claimed = new Map<string, string>();
  const listeners: SelfServiceListener[] = [];
  const verdicts = new Map<string, RouteVerdict>();
  const naming = routes
    .filter((r) => asksSelfService(r, opts) && parentGateways(r).some((p) => p.namespace === gateway.metadata.namespace && p.name === gateway.metadata.name))
    .sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') || routeKey(a).localeCompare(routeKey(b)));
  for (const route of naming) {
    const issuer = issuerFromAnnotations(shimReadable(route.metadata.annotations, opts), opts.defaultIssuer);
    if ('problem' in issuer) {
      verdicts.set(routeKey(route), { refused: [`the route's issuer annotations: ${issuer.problem}`] });
      continue;
    }
    const hostnames = [...new Set((route.spec?.hostnames ?? []).map((h) => h.toLowerCase()))];
    const why = refusal(policy, gwName, { namespaceLabels: namespaceLabels(route.metadata.namespace), hostnames, issuer });
    if (why) {
      verdicts.set(routeKey(route), { refused: [why] });
      continue;
    }
    const granted: string[] = [];
    const refused: string[] = [];
    const inSet = !!opts.listenerSets && admitsListenerSets(gateway, route.metadata.namespace, namespaceLabels(route.metadata.namespace));
    const own: SelfServiceListener[] = [];
    for (const h of hostnames) {
      const holder = claimed.get(h);
      const used = perNamespace.get(route.metadata.namespace) ?? 0;
      const limit = typeof policy === 'object' ? policy.listenersPerNamespace : 0;
      if (foreign.has(h)) refused.push(`${h} is served by listener ${foreign.get(h)} of Gateway ${gwName}, which its owner configures`);
      else if (holder) refused.push(`${h} is self-served on Gateway ${gwName} by route ${holder}, which asked first`);
      else if (used >= limit) refused.push(`${h}: this namespace has the ${limit} listeners Gateway ${gwName} allows a namespace`);
      else if (!inSet && listeners.length >= room) refused.push(`${h}: Gateway ${gwName} has no room for another listener (${MAX_LISTENERS} at most)`);
      else {
        perNamespace.set(route.metadata.namespace, used + 1);
        claimed.set(h, routeKey(route));
        granted.push(h);
        (inSet ? own : listeners).push(listenerFor(route, h, port, inSet));
      }
    }
    if (!granted.length) verdicts.set(routeKey(route), { refused });
    else if (!inSet) verdicts.set(routeKey(route), { hostnames: granted, issuer, refused });
    else verdicts.set(routeKey(route), { hostnames: granted, issuer, refused, listenerSet: routeListenerSet(route, gateway, own) });
  }
  return { listeners: listeners.sort((a, b) => a.name.localeCompare(b.name)), routes: verdicts };
}

/**
 * A route's ListenerSet on a Gateway: its listeners, each using the route's Secret (its own
 * namespace: no ReferenceGrant) and open to routes of that namespace only (`Same`, the default).
 */
function routeListenerSet(route: HTTPRouteObject, gateway: GatewayObject, listeners: SelfServiceListener[]): ListenerSetObject {
  return {
    apiVersion: `${GATEWAY_GROUP}/v1`,
    kind: 'ListenerSet',
    metadata: { name: routeListenerSetName(route.metadata.name, gateway.metadata), namespace: route.metadata.namespace },
    spec: {
      parentRef: { group: GATEWAY_GROUP, kind: 'Gateway', namespace: gateway.metadata.namespace, name: gateway.metadata.name },
      listeners: listeners.sort((a, b) => a.name.localeCompare(b.name)),
    },
  };
}

/**
 * A route's listener for one hostname, open to routes of the team's own namespace only. On the
 * Gateway it names the Secret's namespace and selects that namespace; in the route's own
 * ListenerSet neither is needed (`Same` is the default there too, said for whoever reads it).
 */
function listenerFor(route: HTTPRouteObject, hostname: string, port: number, inSet: boolean): SelfServiceListener {
  const ns = route.metadata.namespace;
  return {
    name: listenerName(route, hostname),
    hostname,
    port,
    protocol: 'HTTPS',
    tls: { mode: 'Terminate', certificateRefs: [{ group: '', kind: 'Secret', name: selfServiceSecretName(route), ...(inSet ? {} : { namespace: ns }) }] },
    allowedRoutes: {
      namespaces: inSet ? { from: 'Same' } : { from: 'Selector', selector: { matchLabels: { 'kubernetes.io/metadata.name': ns } } },
      kinds: [{ group: GATEWAY_GROUP, kind: 'HTTPRoute' }],
    },
  };
}
