import {
  Client,
  CustomResourceDefinition,
  MutatingWebhookConfiguration,
  Role,
  RoleBinding,
  Transport,
  webhookConfigurations,
  type Manager,
} from '@opkit/runtime';
import { localWebhooks, testManager } from '@opkit/runtime/testing';
import { startControlPlane, waitFor, type ControlPlane } from '@opkit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../config.js';
import { addCertificateControllers } from '../controllers/index.js';
import { CUSTOM_RESOURCES } from '../manifests/generate.js';
import { requestIdentity } from './request-identity.js';
import { CERT_APIS } from '../api/index.js';

const { CertificateRequest } = CERT_APIS.opkit;

// A CSR for "x.example.com" (the webhook does not read it; the issuer would).
const CSR = Buffer.from(
  '-----BEGIN CERTIFICATE REQUEST-----\nMIGbMEMCAQAwGDEWMBQGA1UEAwwNeC5leGFtcGxlLmNvbTBZMBMGByqGSM49AgEG\n-----END CERTIFICATE REQUEST-----\n',
).toString('base64');

describe('the cert operator records who created each CertificateRequest', () => {
  let plane: ControlPlane;
  let admin: Client;
  let manager: Manager | undefined;
  let alice: Client;

  beforeAll(async () => {
    plane = await startControlPlane();
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
    for (const r of CUSTOM_RESOURCES) await admin.create(CustomResourceDefinition, r.crd as never);
    await waitFor('CRDs served', () => admin.list(CertificateRequest.kind).then(() => true));
    for (const name of ['opkit-system', 'apps']) await plane.kubectl(['create', 'namespace', name]);
    await admin.create(Role, {
      metadata: { namespace: 'apps', name: 'requester' },
      rules: [{ apiGroups: ['cert.opkit.dev'], resources: ['certificaterequests'], verbs: ['get', 'create', 'update', 'patch'] }],
    });
    await admin.create(RoleBinding, {
      metadata: { namespace: 'apps', name: 'requester' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'requester' },
      subjects: [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' }],
    });
    alice = new Client(new Transport((await plane.userCredentials('alice', ['team-a'])).kubeConfig), { fieldManager: 'alice' });

    const webhooks = await localWebhooks('opkit-system');
    manager = testManager(plane.kubeConfig, { name: 'cert-operator', webhook: { ...webhooks.options, configurationName: 'cert-operator' } }).manager;
    addCertificateControllers(manager, { ...defaultConfig({ clusterResourceNamespace: 'opkit-system' }), autoApprove: false });
    await manager.start();
    // As the chart registers it (there with the webhook Service), without a caBundle: the operator injects its CA.
    await admin.create(
      MutatingWebhookConfiguration,
      webhookConfigurations('cert-operator', [requestIdentity(CERT_APIS.opkit)], { url: webhooks.url }).mutating as never,
    );
  });
  afterAll(async () => {
    await manager?.stop();
    await plane?.stop();
  });

  const request = (name: string, spec: Record<string, unknown> = {}) => ({
    metadata: { namespace: 'apps', name },
    spec: { request: CSR, issuerRef: { name: 'ca' }, ...spec },
  });

  it('overwrites a forged identity with the authenticated user, and the record cannot be changed afterwards', async () => {
    const created = await waitFor('the webhook to answer (its CA injected)', () =>
      alice
        .create(
          CertificateRequest.kind,
          request(`forged-${Date.now()}`, { username: 'system:admin', groups: ['system:masters'], uid: 'fake', extra: { scopes: ['all'] } }) as never,
        )
        .catch(() => undefined),
    );
    expect(created.spec).toMatchObject({ username: 'alice', groups: ['team-a', 'system:authenticated'] });
    // What the API server knows of a client-certificate user: no uid, and the certificate's fingerprint as extra.
    expect(created.spec.uid).toBeUndefined();
    expect(Object.keys(created.spec.extra ?? {})).toEqual(['authentication.kubernetes.io/credential-id']);
    expect(created.spec.extra?.['authentication.kubernetes.io/credential-id']?.[0]).toMatch(/^X509SHA256=/);

    const forge = alice.patch(CertificateRequest.kind, { namespace: 'apps', name: created.metadata.name! }, { spec: { username: 'system:admin' } });
    await expect(forge).rejects.toThrow(/spec is immutable/);
    // The admin is recorded as the admin: the webhook applies to everyone.
    const byAdmin = await admin.create(CertificateRequest.kind, request('by-admin', { username: 'alice' }) as never);
    expect(byAdmin.spec.username).not.toBe('alice');
    expect(byAdmin.spec.groups).toContain('system:masters');
  });

  it('refuses requests while the operator is down (failurePolicy Fail), saying which webhook failed', async () => {
    await manager!.stop();
    manager = undefined;
    await expect(alice.create(CertificateRequest.kind, request('while-down') as never)).rejects.toThrow(
      /failed calling webhook "identity.certificaterequests.cert.opkit.dev"/,
    );
  });
});
