import type { KubeObject, ReconcileContext } from '@opkit/runtime';
import type { CertApi } from '../../api/index.js';
import type { DesiredCertificate, ShimPlan } from '../../shim/ingress.js';

/**
 * Brings a shim's Certificates in step with its plan (ingress-shim and gateway-shim alike): each
 * desired Certificate applied (a no-op when unchanged), one this object does not control left
 * alone and said so, and the ones it controls whose Secret it no longer names deleted.
 */
export async function syncShimCertificates(
  { Certificate }: CertApi,
  owner: KubeObject & { metadata: { name: string; namespace: string; uid?: string } },
  plan: ShimPlan,
  ctx: ReconcileContext,
): Promise<void> {
  if ('skip' in plan) return;
  if ('blocked' in plan) {
    ctx.recorder.warning(owner, 'BadConfig', plan.blocked);
    return;
  }
  for (const message of plan.skipped) ctx.recorder.warning(owner, 'BadConfig', message);
  const controlledBy = (c: KubeObject) => c.metadata.ownerReferences?.some((r) => r.controller && r.uid === owner.metadata.uid);
  for (const want of plan.certificates) {
    const existing = await ctx.cache.get(Certificate.kind, { namespace: want.metadata.namespace, name: want.metadata.name });
    if (existing && !controlledBy(existing)) {
      ctx.recorder.warning(owner, 'BadConfig', `Certificate "${want.metadata.name}" already exists and is not controlled by this ${owner.kind}: left as it is`);
      continue;
    }
    const res = await ctx.apply(Certificate.kind, want as DesiredCertificate as never, existing);
    if (res.outcome === 'created') ctx.recorder.normal(owner, 'CreateCertificate', `Successfully created Certificate "${want.metadata.name}"`);
    else if (res.outcome === 'updated') ctx.recorder.normal(owner, 'UpdateCertificate', `Successfully updated Certificate "${want.metadata.name}"`);
  }
  // The ones applied above are as the plan wants them, whatever the cache still shows: one whose
  // secretName was edited by hand and just put back is not "no longer named" (docs/runtime.md,
  // read-your-writes within a reconcile).
  const named = new Set(plan.secretNames);
  const applied = new Set(plan.certificates.map((w) => w.metadata.name));
  for (const c of await ctx.cache.list(Certificate.kind, { namespace: owner.metadata.namespace })) {
    if (!controlledBy(c) || applied.has(c.metadata.name) || named.has(c.spec.secretName)) continue;
    if (await ctx.delete(Certificate.kind, c))
      ctx.recorder.normal(owner, 'DeleteCertificate', `Successfully deleted unrequired Certificate "${c.metadata.name}"`);
  }
}
