import { controllerFor, Deployment, Pod, Service, type Cache, type ReconcileContext, type Request } from '@opkit/runtime';
import { FINALIZER, Memcached, type MemcachedObject } from '../../api/v1beta1/memcached.js';
import { MANAGED_BY, selectorLabels } from './labels.js';
import { desiredDeployment, desiredService } from './resources.js';
import { computeStatus, failureStatus } from './status.js';
import { memcachedRbac } from './rbac.js';

/** Only our own pods are cached: a cluster's other pods are none of this operator's business. */
export const POD_INFORMER = { labelSelector: `app.kubernetes.io/managed-by=${MANAGED_BY}` };

/** A pod belongs to the Memcached named by its instance label (the Deployment sets it on every pod). */
const podToMemcached = (pod: { metadata: { namespace?: string; labels?: Record<string, string> } }): Request[] => {
  const name = pod.metadata.labels?.['app.kubernetes.io/instance'];
  return name ? [{ namespace: pod.metadata.namespace, name }] : [];
};

/**
 * The operator-sdk tutorial's cleanup step, kept: log and record an event before the Memcached
 * goes. Its Deployment and Service go with it through their owner references.
 */
const cleanup = (mc: MemcachedObject, ctx: ReconcileContext) => () => {
  ctx.log.info('running the finalizer before deletion');
  ctx.recorder.warning(mc, 'Deleting', `Custom Resource ${mc.metadata.name} is being deleted from the namespace ${mc.metadata.namespace}`);
};

async function podsOf(cache: Cache, mc: MemcachedObject) {
  return cache.list(Pod, { namespace: mc.metadata.namespace, labelSelector: selectorLabels(mc.metadata.name) }, POD_INFORMER);
}

export async function reconcileMemcached(req: Request, ctx: ReconcileContext): Promise<void> {
  const { cache, recorder, log } = ctx;
  const cached = await cache.get(Memcached.kind, req);
  if (!cached) return; // gone: owner references let the garbage collector remove what it owned
  const { state, obj: mc } = await ctx.finalize(Memcached.kind, cached, { finalizer: FINALIZER, cleanup: cleanup(cached, ctx) });
  if (state === 'finalized') return;

  // The Deployment and the Service do not depend on each other: both are written at once (the
  // finalizer, above, comes first). A first pass costs three round trips, not four.
  const currentDep = await cache.get(Deployment, req);
  const [dep, svc] = await Promise.all([
    ctx.apply(Deployment, desiredDeployment(mc), currentDep),
    ctx.apply(Service, desiredService(mc), await cache.get(Service, req)),
  ]);
  if (dep.outcome === 'created') recorder.normal(mc, 'Created', `Created Deployment ${req.name} with ${mc.spec.replicas} replicas`);
  else if (dep.outcome === 'updated') {
    const before = currentDep?.spec?.replicas;
    if (before !== mc.spec.replicas && before !== undefined)
      recorder.normal(mc, 'Scaled', `Scaled Deployment ${req.name} from ${before} to ${mc.spec.replicas} replicas`);
    else recorder.normal(mc, 'Updated', `Updated Deployment ${req.name} to the current spec`);
    log.info({ replicas: mc.spec.replicas }, 'deployment updated');
  }
  if (svc.outcome === 'created') recorder.normal(mc, 'Created', `Created headless Service ${req.name}`);
  else if (svc.outcome === 'updated') recorder.normal(mc, 'Updated', `Repaired Service ${req.name}`);

  const status = computeStatus(mc, dep.obj, await podsOf(cache, mc), new Date(ctx.clock.now()));
  const prev = mc.status?.conditions?.find((c) => c.type === 'Degraded');
  const degraded = status.conditions?.find((c) => c.type === 'Degraded');
  if (degraded?.status === 'True' && prev?.status !== 'True') recorder.warning(mc, degraded.reason, degraded.message);
  await ctx.updateStatus(Memcached.kind, mc, status);
}

/** Memcached → Deployment + headless Service, status from the Deployment and the pods. */
export const memcachedController = controllerFor(Memcached.kind)
  .withRbac(memcachedRbac)
  .owns(Deployment)
  .owns(Service)
  .watches(Pod, podToMemcached, { informer: POD_INFORMER })
  .withOptions({ maxConcurrentReconciles: 2, errorStatus: (mc, failure, now) => failureStatus(mc as MemcachedObject, failure, now) })
  .reconcile(reconcileMemcached);
