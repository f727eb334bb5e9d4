import { defineKind, labelSelectorMatcher, type KubeObject } from '@opkit/runtime';
import { SOLVER_OVERRIDES } from '../acme/solver-overrides.js';
import { childName } from '../names.js';
import { hasShimTrigger, issuerFromAnnotations, shimReadable, specFromAnnotations, type ShimOptions } from './annotations.js';
import { GATEWAY_GROUP, parentOfKind, tlsListenerHosts, type GatewayObject, type Listener } from './gateway.js';
import { shimCertificate, type ShimPlan } from './ingress.js';
import { refusal, selfServicePolicy } from './self-service-policy.js';

/**
 * Gateway API ListenerSets (v1.5, standard channel): listeners an application team keeps in its
 * own namespace, merged into a parent Gateway's by the Gateway implementation, where the Gateway's
 * `allowedListeners` admits the namespace (Gateway API's default: no namespace). A ListenerSet's
 * listener may use Secrets of its own namespace without a ReferenceGrant. Routes attach to its
 * listeners only by naming the ListenerSet as a parent; naming the Gateway is not enough.
 *
 * Two ways self-service uses them (docs/cert-operator.md "Gateway API self-service"):
 * - an annotated HTTPRoute whose Gateway admits ListenerSets from its namespace gets its HTTPS
 *   listeners in a ListenerSet the operator makes in that namespace (self-service.ts), instead of
 *   listeners on the Gateway;
 * - a ListenerSet the team writes and annotates with an issuer gets a Certificate for each Secret
 *   its TLS listeners name (`planForListenerSet`, below), as an annotated Gateway does
 *   (gateway-shim), within the parent Gateway's self-service policy.
 * Pure; the controllers read the cache and write.
 */

export type ListenerSetObject = KubeObject & {
  metadata: { name: string; namespace: string };
  spec: { parentRef: { group?: string; kind?: string; namespace?: string; name: string }; listeners: Listener[] };
};

export const ListenerSet = defineKind<ListenerSetObject>({
  group: GATEWAY_GROUP,
  version: 'v1',
  kind: 'ListenerSet',
  plural: 'listenersets',
  namespaced: true,
});

/** The Gateway a ListenerSet names as its parent (`namespace/name`), if it names a Gateway. */
export const listenerSetParent = (ls: ListenerSetObject) => parentOfKind(ls.spec.parentRef, 'Gateway', ls.metadata.namespace);

/** Whether the Gateway lets ListenerSets of `namespace` attach: its `allowedListeners`, default none. */
export function admitsListenerSets(gw: GatewayObject, namespace: string, namespaceLabels: Record<string, string> | undefined): boolean {
  const from = gw.spec.allowedListeners?.namespaces;
  switch (from?.from) {
    case 'All':
      return true;
    case 'Same':
      return namespace === gw.metadata.namespace;
    case 'Selector':
      // An absent selector selects nothing here: Gateway API requires one with Selector.
      return !!from.selector && labelSelectorMatcher(from.selector)(namespaceLabels);
    default:
      return false;
  }
}

/**
 * The ListenerSet the operator makes for a route on a Gateway: `<route>-<gateway>-https`, in the
 * route's namespace. Predictable, because the team names it in the route's `parentRefs` (the
 * operator cannot add a parent to the team's route: `parentRefs` is an atomic list, so applying it
 * would take the whole list from whoever wrote it).
 */
export const routeListenerSetName = (routeName: string, gateway: { name: string }): string => childName(routeName, `${gateway.name}-https`);

/**
 * What an annotated ListenerSet asks for: one Certificate per Secret its TLS listeners reference
 * (as gateway-shim), if the parent Gateway's self-service policy offers the namespace, every
 * hostname and the issuer, and its `allowedListeners` admits the namespace (else the listeners
 * would never be served). The ACME solver's route goes to the parent Gateway: HTTP-01 is answered
 * on its port-80 listener, which must admit routes from the team's namespace.
 */
export function planForListenerSet(
  ls: ListenerSetObject,
  gateway: GatewayObject | undefined,
  namespaceLabels: Record<string, string> | undefined,
  opts: ShimOptions = {},
): ShimPlan {
  const a = shimReadable(ls.metadata.annotations, opts);
  if (!hasShimTrigger(a)) return { skip: true };
  const parent = listenerSetParent(ls);
  if (!parent) return { blocked: 'The ListenerSet names no Gateway as its parent' };
  const gwName = `${parent.namespace}/${parent.name}`;
  if (!gateway) return { blocked: `Gateway ${gwName} does not exist` };
  if (!admitsListenerSets(gateway, ls.metadata.namespace, namespaceLabels))
    return { blocked: `Gateway ${gwName} does not admit ListenerSets from this namespace (its spec.allowedListeners), so its listeners would not be served` };
  const issuer = issuerFromAnnotations(a, opts.defaultIssuer);
  if ('problem' in issuer) return { blocked: `Could not determine the issuer: ${issuer.problem}` };
  const { spec, problems } = specFromAnnotations(a);
  if (problems.length) return { blocked: problems.join('; ') };
  const { hosts, skipped } = tlsListenerHosts(ls.spec.listeners, ls.metadata.namespace);
  const hostnames = [...new Set([...hosts.values()].flat().map((h) => h.toLowerCase()))];
  // The same checks as a route's; an empty set is not refused (nothing to certify yet).
  const why = hostnames.length && refusal(selfServicePolicy(gateway.metadata.annotations), gwName, { namespaceLabels, hostnames, issuer });
  if (why) return { blocked: `Refused: ${why}` };
  const overrides = {
    [SOLVER_OVERRIDES.parentRefKind]: 'Gateway',
    [SOLVER_OVERRIDES.parentRefName]: gateway.metadata.name,
    [SOLVER_OVERRIDES.parentRefNamespace]: gateway.metadata.namespace,
  };
  return {
    certificates: [...hosts].map(([secretName, names]) => shimCertificate(ListenerSet, ls, secretName, names, issuer, spec, overrides)),
    secretNames: [...hosts.keys()],
    skipped,
  };
}
