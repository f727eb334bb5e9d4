import { Secret, type Manager } from '@opkit/runtime';
import type { CertOperatorConfig } from '../config.js';
import { LABELLED } from '../secrets/secret-reader.js';
import { certificateRequestController, type Signer } from './certificaterequests/controller.js';
import { certificateController } from './certificates/controller.js';
import { issuerControllers, type ReadinessCheck } from './issuers/controller.js';

/** Everything the cert operator runs, on one manager. */
export function addCertificateControllers(manager: Manager, cfg: CertOperatorConfig, acme?: { signer: Signer; readiness: ReadinessCheck; controllers: Parameters<Manager['add']>[0][] }) {
  // Secrets: full data only for those carrying our label; every other Secret as metadata only.
  manager.cache.configure(Secret, LABELLED);
  for (const c of issuerControllers(cfg, acme?.readiness)) manager.add(c);
  manager.add(certificateController(cfg));
  manager.add(certificateRequestController(cfg, { acme: acme?.signer }));
  for (const c of acme?.controllers ?? []) manager.add(c);
}
