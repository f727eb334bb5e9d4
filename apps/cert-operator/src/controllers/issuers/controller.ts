import { controllerFor, Secret, type Condition, type MapContext, type ReconcileContext, type Request } from '@opkit/runtime';
import { ClusterIssuer, Issuer, type IssuerObject } from '../../api/v1/issuer.js';
import type { CertOperatorConfig } from '../../config.js';
import { loadCAKeyPair } from '../../issuers/ca-keypair.js';
import type { IssuerKindName } from '../../issuers/resolve.js';
import { LABELLED, METADATA, SecretReader } from '../../secrets/secret-reader.js';

export const CA_SECRET_INDEX = 'spec.ca.secretName';

/** Readiness of one issuer type; ACME plugs in its own (account registration). */
export type ReadinessCheck = (issuer: IssuerObject, resourceNamespace: string, ctx: ReconcileContext) => Promise<{ status: 'True' | 'False'; reason: string; message: string; statusPatch?: Partial<NonNullable<IssuerObject['status']>>; requeueAfter?: number }>;

export function issuerReconciler(kind: IssuerKindName, cfg: CertOperatorConfig, acmeReadiness?: ReadinessCheck) {
  const crd = kind === 'Issuer' ? Issuer : ClusterIssuer;
  return async (req: Request, ctx: ReconcileContext) => {
    const issuer = (await ctx.cache.get(crd.kind, req)) as IssuerObject | undefined;
    if (!issuer) return;
    const resourceNamespace = kind === 'Issuer' ? req.namespace! : cfg.clusterResourceNamespace;
    let verdict: Awaited<ReturnType<ReadinessCheck>>;
    if (issuer.spec.selfSigned) verdict = { status: 'True', reason: 'IsReady', message: 'Issuer is ready (SelfSigned)' };
    else if (issuer.spec.ca) {
      const pair = await loadCAKeyPair(new SecretReader(ctx.cache, ctx.client), resourceNamespace, issuer.spec.ca.secretName);
      verdict = pair.ok ? { status: 'True', reason: 'KeyPairVerified', message: 'Signing CA verified' } : { status: 'False', reason: pair.reason, message: pair.message };
    } else if (issuer.spec.acme && acmeReadiness) verdict = await acmeReadiness(issuer, resourceNamespace, ctx);
    else verdict = { status: 'False', reason: 'InvalidConfig', message: 'no issuer type is configured' };

    const prev = issuer.status?.conditions?.find((c) => c.type === 'Ready');
    if (verdict.status === 'False' && (prev?.reason !== verdict.reason || prev.message !== verdict.message)) ctx.recorder.warning(issuer, verdict.reason, verdict.message);
    const conditions = ctx.setCondition(issuer.status?.conditions as Condition[] | undefined, {
      type: 'Ready', status: verdict.status, reason: verdict.reason, message: verdict.message, observedGeneration: issuer.metadata.generation,
    });
    await ctx.updateStatus(crd.kind, issuer, { ...issuer.status, ...verdict.statusPatch, conditions });
    return verdict.requeueAfter ? { requeueAfter: verdict.requeueAfter } : undefined;
  };
}

/**
 * Issuer and ClusterIssuer readiness. A CA issuer is reconciled again whenever its Secret changes:
 * every Secret is watched as metadata only and mapped to the issuers naming it (a cache index).
 */
export function issuerControllers(cfg: CertOperatorConfig, acmeReadiness?: ReadinessCheck) {
  const caSecret = (i: Pick<IssuerObject, 'spec'>) => (i.spec.ca ? [i.spec.ca.secretName] : []);
  const issuersFor = async (s: { metadata: { name: string; namespace: string } }, { cache }: MapContext) =>
    (await cache.list(Issuer.kind, { namespace: s.metadata.namespace, index: { name: CA_SECRET_INDEX, value: s.metadata.name } })).map((i) => ({ namespace: i.metadata.namespace, name: i.metadata.name }));
  const clusterIssuersFor = async (s: { metadata: { name: string; namespace: string } }, { cache }: MapContext) =>
    s.metadata.namespace !== cfg.clusterResourceNamespace
      ? []
      : (await cache.list(ClusterIssuer.kind, { index: { name: CA_SECRET_INDEX, value: s.metadata.name } })).map((i) => ({ name: i.metadata.name }));
  // CA Secrets are read from the full cache when labelled and from the API otherwise: watch both.
  const issuer = controllerFor(Issuer.kind)
    .named('issuer')
    .withIndex(Issuer.kind, CA_SECRET_INDEX, caSecret)
    .watches(Secret, issuersFor, { informer: METADATA })
    .watches(Secret, issuersFor, { informer: LABELLED })
    .withOptions({ errorCondition: 'Ready' })
    .reconcile(issuerReconciler('Issuer', cfg, acmeReadiness));
  const clusterIssuer = controllerFor(ClusterIssuer.kind)
    .named('clusterissuer')
    .withIndex(ClusterIssuer.kind, CA_SECRET_INDEX, caSecret)
    .watches(Secret, clusterIssuersFor, { informer: METADATA })
    .watches(Secret, clusterIssuersFor, { informer: LABELLED })
    .withOptions({ errorCondition: 'Ready' })
    .reconcile(issuerReconciler('ClusterIssuer', cfg, acmeReadiness));
  return [issuer, clusterIssuer];
}
