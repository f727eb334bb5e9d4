import { controllerFor, type ReconcileContext, type Request } from '@opkit/runtime';
import { shimOptions, type CertOperatorConfig } from '../../config.js';
import { Gateway, planForGateway } from '../../shim/gateway.js';
import { shimRbac } from '../rbac.js';
import { syncShimCertificates } from './sync.js';

/**
 * gateway-shim, as cert-manager's: a Gateway annotated cert-manager.io/issuer or
 * cert-manager.io/cluster-issuer gets a Certificate for each Secret its HTTPS and TLS listeners
 * reference. Runs with --enable-gateway-api (the Gateway API CRDs must be installed).
 */
export function gatewayShimController(cfg: CertOperatorConfig) {
  return controllerFor(Gateway)
    .named('gateway-shim')
    .withRbac(shimRbac(cfg.api, Gateway))
    .owns(cfg.api.Certificate.kind)
    .reconcile(async (req: Request, ctx: ReconcileContext) => {
      const gw = await ctx.cache.get(Gateway, req);
      if (!gw || gw.metadata.deletionTimestamp || gw.metadata.finalizers?.includes('foregroundDeletion')) return;
      await syncShimCertificates(cfg.api, gw, planForGateway(gw, shimOptions(cfg)), ctx);
    });
}
