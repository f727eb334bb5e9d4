import { controllerFor, Ingress, type ReconcileContext, type Request } from '@opkit/runtime';
import { shimOptions, type CertOperatorConfig } from '../../config.js';
import { planForIngress, type IngressObject } from '../../shim/ingress.js';
import { shimRbac } from '../rbac.js';
import { syncShimCertificates } from './sync.js';

/**
 * ingress-shim, as cert-manager's: an Ingress annotated cert-manager.io/issuer or
 * cert-manager.io/cluster-issuer (or kubernetes.io/tls-acme with a default issuer) gets a
 * Certificate per TLS entry, kept in step with the Ingress and deleted when its entry goes.
 * Problems are Warning events on the Ingress (it has no conditions to carry them).
 */
export function ingressShimController(cfg: CertOperatorConfig) {
  return controllerFor(Ingress)
    .named('ingress-shim')
    .withRbac(shimRbac(cfg.api, Ingress))
    .owns(cfg.api.Certificate.kind)
    .reconcile(async (req: Request, ctx: ReconcileContext) => {
      const ing = (await ctx.cache.get(Ingress, req)) as IngressObject | undefined;
      if (!ing || ing.metadata.deletionTimestamp || ing.metadata.finalizers?.includes('foregroundDeletion')) return;
      await syncShimCertificates(cfg.api, ing, planForIngress(ing, shimOptions(cfg)), ctx);
    });
}
