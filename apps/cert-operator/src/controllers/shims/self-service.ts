import {
  APPLIED_HASH_ANNOTATION,
  contentHash,
  controllerFor,
  controllerReference,
  getCondition,
  isControlledBy,
  isSubset,
  Namespace,
  requestForObject,
  removeCondition,
  type Cache,
  type Condition,
  type KubeObject,
  type ReconcileContext,
  type Request,
  type Result,
} from '@opkit/runtime';
import { SOLVER_OVERRIDES } from '../../acme/solver-overrides.js';
import { HTTPRoute } from '../../acme/solver-resources.js';
import { shimOptions, type CertOperatorConfig } from '../../config.js';
import { childName } from '../../names.js';
import { Gateway, parentOfKind, type GatewayObject } from '../../shim/gateway.js';
import { shimCertificate } from '../../shim/ingress.js';
import { listenerSetRbac, selfServiceRbac, shimRbac } from '../rbac.js';
import { ListenerSet, type ListenerSetObject } from '../../shim/listener-set.js';
import {
  asksSelfService,
  ReferenceGrant,
  gatewayPlan,
  LISTENER_PREFIX,
  parentGateways,
  routeKey,
  selfServiceSecretName,
  type HTTPRouteObject,
  type SelfServiceListener,
} from '../../shim/self-service.js';

/**
 * Gateway API self-service (shim/self-service.ts has the rules): two controllers reading one plan
 * per Gateway. The route controller gives each asking HTTPRoute its Certificate, the
 * ReferenceGrant that lets the Gateway read the Secret, and its verdict in the route's status (an
 * entry of this operator's own in `status.parents`, beside the Gateway implementation's); the
 * Gateway controller server-side applies the listeners, under this operator's field manager. Runs
 * with --enable-gateway-self-service.
 */

/** HTTPRoutes, all of them (the ACME solver's informer holds only its own routes). */
const Route = HTTPRoute;
/** The controller name of this operator's entries in a route's `status.parents`. */
export const SELF_SERVICE_CONTROLLER = 'cert.opkit.dev/self-service';
/** Routes by the Gateways they name (`namespace/name`). */
const PARENT_INDEX = 'self-service.parentGateways';
/** Gateway API's limits: a route's status.parents entries, a condition's message. */
const MAX_PARENTS = 32;
const MAX_MESSAGE = 4_096;
/** Marks the Certificates and grants made for self-service (and so the ones to remove). */
export const SELF_SERVICE_LABEL = 'cert.opkit.dev/self-service';

const parentKeys = (r: KubeObject) => parentGateways(r as HTTPRouteObject).map((p) => `${p.namespace}/${p.name}`);

/** The plan of a Gateway, from the cache: the Gateway, the routes naming it, their namespaces' labels. */
async function planOf(cfg: CertOperatorConfig, cache: Cache, gw: GatewayObject) {
  const routes = (await cache.list(Route, { index: { name: PARENT_INDEX, value: `${gw.metadata.namespace}/${gw.metadata.name}` } })) as HTTPRouteObject[];
  const labels = new Map<string, Record<string, string> | undefined>();
  for (const ns of new Set(routes.map((r) => r.metadata.namespace)))
    labels.set(ns, (await cache.get(Namespace, { name: ns }, { metadataOnly: true }))?.metadata.labels);
  return gatewayPlan(gw, routes, (ns) => labels.get(ns), { ...shimOptions(cfg), listenerSets: cfg.gatewayListenerSets });
}

type ParentStatus = { parentRef: { group: string; kind: string; namespace: string; name: string }; controllerName: string; conditions: Condition[] };

export function selfServiceRouteController(cfg: CertOperatorConfig) {
  const { api } = cfg;
  const { Certificate } = api;

  async function reconcile(req: Request, ctx: ReconcileContext): Promise<Result> {
    const route = (await ctx.cache.get(Route, req)) as HTTPRouteObject | undefined;
    if (!route || route.metadata.deletionTimestamp) return;
    const asking = asksSelfService(route, shimOptions(cfg));
    const allowed = new Map<string, { gateway: GatewayObject; hostnames: string[]; listenerSet?: ListenerSetObject }>();
    const verdicts: { gateway: { namespace: string; name: string }; ok: boolean; message: string }[] = [];
    let issuer: { name: string; kind: string; group?: string } | undefined;
    if (asking) {
      for (const ref of parentGateways(route)) {
        const gw = await ctx.cache.get(Gateway, ref);
        if (!gw) {
          verdicts.push({ gateway: ref, ok: false, message: `Gateway ${ref.namespace}/${ref.name} does not exist` });
          continue;
        }
        const verdict = (await planOf(cfg, ctx.cache, gw)).routes.get(routeKey(route));
        if (!verdict) continue;
        if (verdict.hostnames) {
          allowed.set(`${ref.namespace}/${ref.name}`, { gateway: gw, hostnames: verdict.hostnames, listenerSet: verdict.listenerSet });
          issuer ??= verdict.issuer;
        }
        const granted = !verdict.hostnames
          ? ''
          : verdict.listenerSet
            ? servedBySet(route, verdict.hostnames, verdict.listenerSet)
            : `certificate for ${verdict.hostnames.join(', ')} served by Gateway ${ref.namespace}/${ref.name}`;
        verdicts.push({
          gateway: ref,
          ok: !!verdict.hostnames,
          // A condition's message holds 32,768 characters; a route naming a hundred hosts is said in part.
          message: [granted, ...verdict.refused.map((r) => `refused: ${r}`)].filter(Boolean).join('; ').slice(0, MAX_MESSAGE),
        });
      }
    }

    const secretName = selfServiceSecretName(route);
    const hostnames = [...new Set([...allowed.values()].flatMap((a) => a.hostnames))];
    const controlled = (o: KubeObject) => isControlledBy(o, route);
    const existing = await ctx.cache.get(Certificate.kind, { namespace: route.metadata.namespace, name: secretName });
    let certificateTaken = false;
    if (hostnames.length && issuer) {
      if (existing && !controlled(existing)) certificateTaken = true;
      else {
        // The solver's route goes to the first Gateway that serves the route (HTTP-01 is answered
        // on its port 80 listener, which must admit routes from this namespace).
        const first = [...allowed.values()][0]!.gateway;
        const want = shimCertificate(
          Route,
          route,
          secretName,
          hostnames,
          issuer,
          {},
          {
            [SOLVER_OVERRIDES.parentRefKind]: 'Gateway',
            [SOLVER_OVERRIDES.parentRefName]: first.metadata.name,
            [SOLVER_OVERRIDES.parentRefNamespace]: first.metadata.namespace,
          },
        );
        want.metadata.labels = { ...want.metadata.labels, [SELF_SERVICE_LABEL]: 'true' };
        const res = await ctx.apply(Certificate.kind, want as never, existing);
        if (res.outcome === 'created') ctx.recorder.normal(route, 'CreateCertificate', `Created Certificate "${secretName}" for ${hostnames.join(', ')}`);
      }
    } else if (existing && controlled(existing)) {
      if (await ctx.delete(Certificate.kind, existing))
        ctx.recorder.normal(route, 'DeleteCertificate', `Deleted Certificate "${secretName}": no Gateway serves it now`);
    }

    // The Gateways in other namespaces read the Secret through a grant in this one (a ListenerSet
    // in this namespace needs none).
    const grantName = childName(route.metadata.name, 'gateway-tls');
    const from = [
      ...new Set(
        [...allowed.values()]
          .filter((a) => !a.listenerSet)
          .map((a) => a.gateway.metadata.namespace)
          .filter((n) => n !== route.metadata.namespace),
      ),
    ].sort();
    const grant = await ctx.cache.get(ReferenceGrant, { namespace: route.metadata.namespace, name: grantName });
    if (from.length && !certificateTaken) {
      await ctx.apply(
        ReferenceGrant,
        {
          apiVersion: 'gateway.networking.k8s.io/v1beta1',
          kind: 'ReferenceGrant',
          metadata: {
            name: grantName,
            namespace: route.metadata.namespace,
            labels: { [SELF_SERVICE_LABEL]: 'true' },
            ownerReferences: [controllerReference(Route, route)],
          },
          spec: {
            from: from.map((namespace) => ({ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace })),
            to: [{ group: '', kind: 'Secret', name: secretName }],
          },
        },
        grant,
      );
    } else if (grant && controlled(grant)) await ctx.delete(ReferenceGrant, grant);

    // The HTTPS listeners of routes whose Gateway admits ListenerSets: one ListenerSet per Gateway,
    // the route's own; those it no longer gets go.
    if (cfg.gatewayListenerSets) {
      const sets = new Map(
        [...allowed.values()].flatMap((a) => (a.listenerSet && !certificateTaken ? [[a.listenerSet.metadata.name, a.listenerSet] as const] : [])),
      );
      for (const want of sets.values()) {
        const have = await ctx.cache.get(ListenerSet, { namespace: want.metadata.namespace, name: want.metadata.name });
        if (have && !controlled(have)) {
          ctx.recorder.warning(route, 'SelfServiceRefused', `ListenerSet "${want.metadata.name}" exists and is not this route's: left as it is`);
          continue;
        }
        const desired = {
          ...want,
          metadata: { ...want.metadata, labels: { [SELF_SERVICE_LABEL]: 'true' }, ownerReferences: [controllerReference(Route, route)] },
        };
        const res = await ctx.apply(ListenerSet, desired, have);
        if (res.outcome === 'created')
          ctx.recorder.normal(
            route,
            'CreateListenerSet',
            `Created ListenerSet "${want.metadata.name}" for ${want.spec.listeners.map((l) => l.hostname).join(', ')}`,
          );
      }
      for (const ls of await ctx.cache.list(ListenerSet, { namespace: route.metadata.namespace, labelSelector: { [SELF_SERVICE_LABEL]: 'true' } }))
        if (controlled(ls) && !sets.has(ls.metadata.name)) await ctx.delete(ListenerSet, ls);
    }

    // The verdict, on the route: one entry per Gateway asked, under this operator's name.
    // (The Certificate's readiness as the cache has it: the apply above changes only its spec.)
    const ready = hostnames.length && !certificateTaken ? getCondition(existing?.status?.conditions as Condition[] | undefined, 'Ready') : undefined;
    const status = ((route as { status?: unknown }).status ?? {}) as { parents?: ParentStatus[] };
    const before = (status.parents ?? []).filter((p) => p.controllerName === SELF_SERVICE_CONTROLLER);
    const ours: ParentStatus[] = verdicts.map((v) => {
      const message = certificateTaken ? `refused: Certificate "${secretName}" exists and is not this route's` : v.message;
      const ok = v.ok && !certificateTaken;
      // From the entry written before: lastTransitionTime moves only on a transition, and an
      // unchanged verdict writes nothing.
      const previous = before.find((b) => b.parentRef.namespace === v.gateway.namespace && b.parentRef.name === v.gateway.name)?.conditions;
      let conditions = ctx.setCondition(previous, { type: 'SelfService', status: ok ? 'True' : 'False', reason: ok ? 'Accepted' : 'Refused', message });
      conditions = ok
        ? ctx.setCondition(conditions, {
            type: 'CertificateReady',
            status: ready?.status === 'True' ? 'True' : ready?.status === 'False' ? 'False' : 'Unknown',
            reason: ready?.reason || 'Pending',
            message: ready?.message ?? `Certificate "${secretName}" is being issued`,
          })
        : removeCondition(conditions, 'CertificateReady');
      return {
        parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: v.gateway.namespace, name: v.gateway.name },
        controllerName: SELF_SERVICE_CONTROLLER,
        conditions,
      };
    });
    const refusals = (entries: ParentStatus[]) =>
      entries.map((p) => getCondition(p.conditions, 'SelfService')).flatMap((c) => (c?.status === 'False' ? [c.message] : []));
    const refusedBefore = new Set(refusals(before));
    for (const m of refusals(ours)) if (!refusedBefore.has(m)) ctx.recorder.warning(route, 'SelfServiceRefused', m);
    const others = (status.parents ?? []).filter((p) => p.controllerName !== SELF_SERVICE_CONTROLLER);
    // status.parents holds 32 entries: the Gateway implementations' come first, ours fill what is left.
    const kept = ours.slice(0, Math.max(0, MAX_PARENTS - others.length));
    if (kept.length || before.length) await ctx.updateStatus(Route, route as never, { ...status, parents: [...others, ...kept] } as never);
    return;
  }

  const builder = controllerFor(Route)
    .named('gateway-self-service-routes')
    .withRbac([...shimRbac(api, Route), ...selfServiceRbac(), ...(cfg.gatewayListenerSets ? listenerSetRbac() : [])])
    .withIndex(Route, PARENT_INDEX, parentKeys)
    .owns(Certificate.kind)
    .owns(ReferenceGrant);
  return (
    (cfg.gatewayListenerSets ? builder.owns(ListenerSet) : builder)
      // A Gateway's policy or listeners, and any route naming it (who asked first), change the plan
      // of every route naming it; a namespace's labels, its routes'.
      .watches(Gateway, async (gw, { cache }) => routesNaming(cache, `${gw.metadata.namespace}/${gw.metadata.name}`))
      .watches(Route, async (r, { cache }) => (await Promise.all(parentKeys(r).map((k) => routesNaming(cache, k)))).flat())
      .watches(Namespace, async (ns, { cache }) => (await cache.list(Route, { namespace: ns.metadata.name })).flatMap(requestForObject), {
        informer: { metadataOnly: true },
      })
      .reconcile(reconcile)
  );
}

/**
 * The verdict of a route served through its ListenerSet. The route attaches to the ListenerSet's
 * listeners only by naming it as a parent, which the team writes (the operator does not take the
 * route's parentRefs from it): until it does, the message says how.
 */
function servedBySet(route: HTTPRouteObject, hostnames: string[], ls: ListenerSetObject): string {
  const gw = ls.spec.parentRef;
  const said = `certificate for ${hostnames.join(', ')} served by ListenerSet ${ls.metadata.namespace}/${ls.metadata.name} on Gateway ${gw.namespace}/${gw.name}`;
  const named = (route.spec?.parentRefs ?? []).some((r) => {
    const p = parentOfKind(r, 'ListenerSet', route.metadata.namespace);
    return p?.name === ls.metadata.name && p.namespace === ls.metadata.namespace;
  });
  return named
    ? said
    : `${said}; to be served on its HTTPS listeners the route names it in spec.parentRefs: {group: gateway.networking.k8s.io, kind: ListenerSet, name: ${ls.metadata.name}}`;
}
const routesNaming = async (cache: Cache, gatewayKey: string) =>
  (await cache.list(Route, { index: { name: PARENT_INDEX, value: gatewayKey } })).flatMap(requestForObject);

/** What this operator applies to a Gateway: its listeners only. */
const desiredGateway = (gw: GatewayObject, listeners: SelfServiceListener[]) => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'Gateway',
  metadata: { name: gw.metadata.name, namespace: gw.metadata.namespace },
  spec: { listeners },
});

/**
 * Whether the Gateway already holds exactly these listeners of ours (by name, each as applied) and
 * the hash of what was last applied: then nothing is sent. The runtime's own check compares lists
 * whole, and the platform team's listeners are in the same list.
 */
export function listenersInPlace(gw: GatewayObject, listeners: SelfServiceListener[]): boolean {
  const ours = (gw.spec.listeners ?? []).filter((l) => l.name.startsWith(LISTENER_PREFIX));
  if (ours.length !== listeners.length) return false;
  const byName = new Map(ours.map((l) => [l.name, l]));
  if (!listeners.every((l) => isSubset(l, byName.get(l.name)))) return false;
  return !listeners.length || gw.metadata.annotations?.[APPLIED_HASH_ANNOTATION] === contentHash(desiredGateway(gw, listeners));
}

export function selfServiceGatewayController(cfg: CertOperatorConfig) {
  async function reconcile(req: Request, ctx: ReconcileContext): Promise<Result> {
    const gw = await ctx.cache.get(Gateway, req);
    if (!gw || gw.metadata.deletionTimestamp) return;
    const { listeners } = await planOf(cfg, ctx.cache, gw);
    if (listenersInPlace(gw, listeners)) return;
    await ctx.apply(Gateway, desiredGateway(gw, listeners) as never, gw);
    ctx.recorder.normal(gw, 'SelfServiceListeners', `Self-service listeners: ${listeners.map((l) => l.hostname).join(', ') || 'none'}`);
  }
  return controllerFor(Gateway)
    .named('gateway-self-service-listeners')
    .withRbac(selfServiceRbac())
    .withIndex(Route, PARENT_INDEX, parentKeys)
    .watches(Route, async (r) => parentGateways(r as HTTPRouteObject))
    .watches(
      Namespace,
      async (ns, { cache }) => (await cache.list(Route, { namespace: ns.metadata.name })).flatMap((r) => parentGateways(r as HTTPRouteObject)),
      {
        informer: { metadataOnly: true },
      },
    )
    .reconcile(reconcile);
}
