import { Client, CustomResourceDefinition, Namespace, Transport, type Manager } from '@opkit/runtime';
import { testManager } from '@opkit/runtime/testing';
import { waitFor, type ControlPlane } from '@opkit/testing';
import { defaultConfig, type CertOperatorConfig } from '../../apps/cert-operator/src/config.js';
import { addCertificateControllers } from '../../apps/cert-operator/src/controllers/index.js';
import { CUSTOM_RESOURCES } from '../../apps/cert-operator/src/manifests/generate.js';
import { CERT_APIS } from '../../apps/cert-operator/src/api/index.js';

const { Certificate } = CERT_APIS.opkit;

/**
 * The cert benches' common start: the operator's CRDs on the plane, its namespace and `bench`,
 * and the cert operator's controllers in-process (its cluster resource namespace opkit-system),
 * started with `config` over the defaults.
 */
export async function startCertOperator(plane: ControlPlane, config: Partial<CertOperatorConfig> = {}): Promise<{ admin: Client; manager: Manager }> {
  const admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'bench' });
  for (const r of CUSTOM_RESOURCES) await admin.create(CustomResourceDefinition, r.crd as never);
  await waitFor('CRDs', () => admin.list(Certificate.kind).then(() => true));
  for (const ns of ['opkit-system', 'bench']) await admin.create(Namespace, { metadata: { name: ns } });
  const { manager } = testManager(plane.kubeConfig, { name: 'cert-operator' });
  addCertificateControllers(manager, defaultConfig({ clusterResourceNamespace: 'opkit-system', ...config }));
  await manager.start();
  return { admin, manager };
}
