import { controllerFor, Namespace, requestForObject, type KubeObject, type ReconcileContext, type Request } from '@opkit/runtime';
import { shimOptions, type CertOperatorConfig } from '../../config.js';
import { Gateway } from '../../shim/gateway.js';
import { ListenerSet, listenerSetParent, planForListenerSet, type ListenerSetObject } from '../../shim/listener-set.js';
import { listenerSetRbac, shimRbac } from '../rbac.js';
import { syncShimCertificates } from './sync.js';

/** ListenerSets by the Gateway they name (`namespace/name`). */
const PARENT_INDEX = 'listener-set.parent';
const parentKey = (o: KubeObject) => {
  const p = listenerSetParent(o as ListenerSetObject);
  return p ? [`${p.namespace}/${p.name}`] : [];
};

/**
 * Self-service through a team's own ListenerSet (shim/listener-set.ts has the rules): annotated
 * with an issuer, it gets a Certificate for each Secret its TLS listeners name, within its parent
 * Gateway's self-service policy. Unlike gateway-shim (the platform team's own Gateway, as
 * cert-manager), what stops being asked for goes: a refusal, or the annotation removed, deletes
 * the Certificates this ListenerSet controls, and the reason is an Event on it. Runs with
 * --enable-gateway-listener-sets.
 */
export function listenerSetShimController(cfg: CertOperatorConfig) {
  return (
    controllerFor(ListenerSet)
      .named('listener-set-shim')
      .withRbac([...shimRbac(cfg.api, ListenerSet), ...listenerSetRbac()])
      .withIndex(ListenerSet, PARENT_INDEX, parentKey)
      .owns(cfg.api.Certificate.kind)
      // The parent's policy and allowedListeners, and the namespace's labels, decide too.
      .watches(Gateway, async (gw, { cache }) =>
        (await cache.list(ListenerSet, { index: { name: PARENT_INDEX, value: `${gw.metadata.namespace}/${gw.metadata.name}` } })).flatMap(requestForObject),
      )
      .watches(Namespace, async (ns, { cache }) => (await cache.list(ListenerSet, { namespace: ns.metadata.name })).flatMap(requestForObject), {
        informer: { metadataOnly: true },
      })
      .reconcile(async (req: Request, ctx: ReconcileContext) => {
        const ls = await ctx.cache.get(ListenerSet, req);
        if (!ls || ls.metadata.deletionTimestamp) return;
        const parent = listenerSetParent(ls);
        const gw = parent && (await ctx.cache.get(Gateway, parent));
        const labels = (await ctx.cache.get(Namespace, { name: ls.metadata.namespace }, { metadataOnly: true }))?.metadata.labels;
        const plan = planForListenerSet(ls, gw, labels, shimOptions(cfg));
        // Nothing asked for, or refused: the Certificates it controls go (the reason said once per change by the recorder's series).
        const nothing = { certificates: [], secretNames: [], skipped: 'blocked' in plan ? [plan.blocked] : [] };
        await syncShimCertificates(cfg.api, ls, 'skip' in plan || 'blocked' in plan ? nothing : plan, ctx);
      })
  );
}
