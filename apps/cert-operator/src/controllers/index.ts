import { Secret, type Manager } from '@opkit/runtime';
import { AcmeAccounts } from '../acme/accounts.js';
import { acmeClientMetrics } from '../acme/metrics.js';
import type { CertOperatorConfig } from '../config.js';
import { registerCertificateMetrics } from '../metrics/certificates.js';
import { registerChallengeMetrics, registerIssuerMetrics } from '../metrics/resources.js';
import { challengeController } from './acme/challenges.js';
import { acmeReadiness } from './acme/issuer-readiness.js';
import { retryRecords } from './acme/retry.js';
import { orderController } from './acme/orders.js';
import { acmeSigner } from './acme/signer.js';
import { renewalInfoController } from './acme/renewal-info.js';
import { certificateRequestController } from './certificaterequests/controller.js';
import { certificateController } from './certificates/controller.js';
import { issuerControllers } from './issuers/controller.js';
import { gatewayShimController } from './shims/gateway-shim.js';
import { ingressShimController } from './shims/ingress-shim.js';
import { selfServiceGatewayController, selfServiceRouteController } from './shims/self-service.js';
import { listenerSetShimController } from './shims/listener-set-shim.js';
import { certWebhooks } from '../webhooks/index.js';

/** Everything the cert operator runs, on one manager: its controllers and its admission webhook. */
export function addCertificateControllers(manager: Manager, cfg: CertOperatorConfig) {
  const { Certificate, Issuer, ClusterIssuer, Challenge } = cfg.api;
  for (const w of certWebhooks(cfg.api, manager.client)) manager.addWebhook(w);
  // Secrets: full data only for those carrying our label; every other Secret as metadata only.
  manager.cache.configure(Secret, cfg.api.labelled);
  // ClusterIssuers keep their Secrets in the cluster resource namespace: watched for Secrets even
  // when the operator is limited to other namespaces (the chart grants it a Role there).
  manager.cache.watchAlso(Secret, [cfg.clusterResourceNamespace]);
  const accounts = cfg.acme ? new AcmeAccounts(cfg.api, acmeClientMetrics(manager.metrics.registry)) : undefined;
  for (const c of issuerControllers(cfg, accounts && acmeReadiness(accounts, retryRecords(cfg.api)))) manager.add(c);
  manager.add(certificateController(cfg));
  // Read from the Certificate informer the controller above already runs: no extra watch.
  const certificates = manager.cache.informer(Certificate.kind);
  registerCertificateMetrics(manager.metrics.registry, cfg.api.groups.cert, () => certificates.list());
  const issuers = manager.cache.informer(Issuer.kind);
  const clusterIssuers = manager.cache.informer(ClusterIssuer.kind);
  registerIssuerMetrics(
    manager.metrics.registry,
    () => issuers.list(),
    () => clusterIssuers.list(),
  );
  manager.add(certificateRequestController(cfg, accounts ? { acme: acmeSigner } : {}));
  if (cfg.ingressShim) manager.add(ingressShimController(cfg));
  if (cfg.enableGatewayAPI) manager.add(gatewayShimController(cfg));
  if (cfg.gatewaySelfService) {
    manager.add(selfServiceRouteController(cfg));
    manager.add(selfServiceGatewayController(cfg));
    if (cfg.gatewayListenerSets) manager.add(listenerSetShimController(cfg));
  }
  if (accounts) {
    manager.add(orderController(cfg, accounts));
    manager.add(challengeController(cfg, accounts));
    manager.add(renewalInfoController(cfg, accounts));
    const challenges = manager.cache.informer(Challenge.kind);
    registerChallengeMetrics(manager.metrics.registry, () => challenges.list());
  }
}
