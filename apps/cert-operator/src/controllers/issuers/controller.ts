import { controllerFor, referenceIndex, removeCondition, Secret, type Condition, type MapContext, type ReconcileContext, type Request } from '@opkit/runtime';
import { renewalProblems } from '../certificates/validate.js';
import type { IssuerObject } from '../../api/v1/issuer.js';
import type { CertOperatorConfig } from '../../config.js';
import { loadCAKeyPair } from '../../issuers/ca-keypair.js';
import type { IssuerKindName } from '../../issuers/resolve.js';
import { SecretReader } from '../../secrets/secret-reader.js';

/** Readiness of one issuer type; ACME plugs in its own (account registration). */
export type ReadinessCheck = (
  issuer: IssuerObject,
  resourceNamespace: string,
  ctx: ReconcileContext,
) => Promise<{ status: 'True' | 'False'; reason: string; message: string; statusPatch?: Partial<NonNullable<IssuerObject['status']>>; requeueAfter?: number }>;

export function issuerReconciler(kind: IssuerKindName, cfg: CertOperatorConfig, acmeReadiness?: ReadinessCheck) {
  const crd = kind === 'Issuer' ? cfg.api.Issuer : cfg.api.ClusterIssuer;
  return async (req: Request, ctx: ReconcileContext) => {
    const issuer = (await ctx.cache.get(crd.kind, req)) as IssuerObject | undefined;
    if (!issuer) return;
    const resourceNamespace = kind === 'Issuer' ? req.namespace! : cfg.clusterResourceNamespace;
    let verdict: Awaited<ReturnType<ReadinessCheck>>;
    if (issuer.spec.selfSigned) verdict = { status: 'True', reason: 'IsReady', message: 'Issuer is ready (SelfSigned)' };
    else if (issuer.spec.ca) {
      const pair = await loadCAKeyPair(new SecretReader(ctx.cache, ctx.client, cfg.api.labelled), resourceNamespace, issuer.spec.ca.secretName);
      verdict = pair.ok
        ? { status: 'True', reason: 'KeyPairVerified', message: 'Signing CA verified' }
        : { status: 'False', reason: pair.reason, message: pair.message };
    } else if (issuer.spec.acme && acmeReadiness) verdict = await acmeReadiness(issuer, resourceNamespace, ctx);
    else if (issuer.spec.vault || issuer.spec.venafi)
      verdict = {
        status: 'False',
        reason: 'UnsupportedIssuerType',
        message: `the ${issuer.spec.vault ? 'vault' : 'venafi'} issuer type is not supported by this operator (selfSigned, ca and acme are); an external issuer can take its place`,
      };
    else verdict = { status: 'False', reason: 'InvalidConfig', message: 'no issuer type is configured' };

    const prev = issuer.status?.conditions?.find((c) => c.type === 'Ready');
    if (verdict.status === 'False' && (prev?.reason !== verdict.reason || prev.message !== verdict.message))
      ctx.recorder.warning(issuer, verdict.reason, verdict.message);
    let conditions = ctx.setCondition(issuer.status?.conditions as Condition[] | undefined, {
      type: 'Ready',
      status: verdict.status,
      reason: verdict.reason,
      message: verdict.message,
      observedGeneration: issuer.metadata.generation,
    });
    // Renewal windows that cannot be read are said on their own condition, not by Ready: the issuer
    // still issues (its Certificates renew as if it had no windows), and nothing expires for a typo.
    const renewal = renewalProblems(issuer.spec.renewal, 'spec.renewal');
    const prevWindows = issuer.status?.conditions?.find((c) => c.type === 'RenewalWindows');
    if (renewal.length) {
      const message = `${renewal.join('; ')}: ignored, the issuer's Certificates renew as if it had no windows`;
      if (prevWindows?.message !== message) ctx.recorder.warning(issuer, 'InvalidRenewalWindows', message);
      conditions = ctx.setCondition(conditions, {
        type: 'RenewalWindows',
        status: 'False',
        reason: 'InvalidRenewalWindows',
        message,
        observedGeneration: issuer.metadata.generation,
      });
    } else conditions = removeCondition(conditions, 'RenewalWindows');
    await ctx.updateStatus(crd.kind, issuer, { ...issuer.status, ...verdict.statusPatch, conditions });
    return verdict.requeueAfter ? { requeueAfter: verdict.requeueAfter } : undefined;
  };
}

/**
 * Issuer and ClusterIssuer readiness. A CA issuer is reconciled again whenever its Secret changes:
 * the CA Secret is a declared reference (every Secret watched as metadata only, mapped to the
 * issuers naming it through the index the declaration keeps).
 */
export function issuerControllers(cfg: CertOperatorConfig, acmeReadiness?: ReadinessCheck) {
  const { Issuer, ClusterIssuer, labelled } = cfg.api;
  const caSecret = (i: Pick<IssuerObject, 'spec'>) => (i.spec.ca ? [i.spec.ca.secretName] : []);
  // A ClusterIssuer's Secret lives in the cluster resource namespace.
  const clusterCaSecret = (i: Pick<IssuerObject, 'spec'>) => caSecret(i).map((name) => ({ namespace: cfg.clusterResourceNamespace, name }));
  // The references' index finds the issuers naming a Secret; the labelled (full) Secret cache, which
  // the CA is read from, delivers its events on its own, so it maps through the same index.
  const byIndex =
    <K extends typeof Issuer.kind | typeof ClusterIssuer.kind>(kind: K) =>
    async (s: { metadata: { name: string; namespace: string } }, { cache }: MapContext) =>
      (await cache.list(kind, { index: { name: referenceIndex(Secret), value: `${s.metadata.namespace}/${s.metadata.name}` } })).map((i) => ({
        namespace: i.metadata.namespace || undefined,
        name: i.metadata.name,
      }));
  const issuer = controllerFor(Issuer.kind)
    .named('issuer')
    .references(Secret, caSecret)
    .watches(Secret, byIndex(Issuer.kind), { informer: labelled })
    .withOptions({ errorCondition: 'Ready' })
    .reconcile(issuerReconciler('Issuer', cfg, acmeReadiness));
  const clusterIssuer = controllerFor(ClusterIssuer.kind)
    .named('clusterissuer')
    .references(Secret, clusterCaSecret)
    .watches(Secret, byIndex(ClusterIssuer.kind), { informer: labelled })
    .withOptions({ errorCondition: 'Ready' })
    .reconcile(issuerReconciler('ClusterIssuer', cfg, acmeReadiness));
  return [issuer, clusterIssuer];
}
