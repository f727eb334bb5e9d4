import {
  Client,
  ClusterRole,
  ClusterRoleBinding,
  CustomResourceDefinition,
  MutatingWebhookConfiguration,
  Transport,
  ValidatingWebhookConfiguration,
  webhookConfigurations,
  type Manager,
  type ObjectOf,
} from '@opkit/runtime';
import { localWebhooks, testManager } from '@opkit/runtime/testing';
import { startControlPlane, waitFor, type ControlPlane } from '@opkit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../config.js';
import { addCertificateControllers } from '../controllers/index.js';
import { CUSTOM_RESOURCES } from '../manifests/generate.js';
import { certWebhooks } from './index.js';
import { CERT_APIS } from '../api/index.js';
import { requestValidation } from './request-validation.js';

const { CertificateRequest } = CERT_APIS.opkit;

// A CSR for "x.example.com" (nothing here reads it).
const CSR = Buffer.from(
  '-----BEGIN CERTIFICATE REQUEST-----\nMIGbMEMCAQAwGDEWMBQGA1UEAwwNeC5leGFtcGxlLmNvbTBZMBMGByqGSM49AgEG\n-----END CERTIFICATE REQUEST-----\n',
).toString('base64');

/**
 * Anyone allowed to update `certificaterequests/status` could approve any request. Approval now
 * takes the `approve` verb on the request's signer (cert-manager's rule), checked by a validating
 * webhook with a SubjectAccessReview, against a real API server and real RBAC.
 */
describe('approving a CertificateRequest takes the right to approve its signer', () => {
  let plane: ControlPlane;
  let admin: Client;
  let manager: Manager | undefined;
  const users: Record<string, Client> = {};

  /** A user with status rights on requests (everyone here), plus `approve` on these signer names. */
  async function user(name: string, signers: string[] = []) {
    await admin.create(ClusterRoleBinding, {
      metadata: { name: `${name}-requests` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'request-status-writer' },
      subjects: [{ kind: 'User', name, apiGroup: 'rbac.authorization.k8s.io' }],
    });
    if (signers.length) {
      await admin.create(ClusterRole, {
        metadata: { name: `${name}-approver` },
        rules: [{ apiGroups: ['cert.opkit.dev'], resources: ['signers'], verbs: ['approve'], resourceNames: signers }],
      });
      await admin.create(ClusterRoleBinding, {
        metadata: { name: `${name}-approver` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${name}-approver` },
        subjects: [{ kind: 'User', name, apiGroup: 'rbac.authorization.k8s.io' }],
      });
    }
    users[name] = new Client(new Transport((await plane.userCredentials(name, ['team'])).kubeConfig), { fieldManager: name });
  }

  beforeAll(async () => {
    plane = await startControlPlane();
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
    for (const r of CUSTOM_RESOURCES) await admin.create(CustomResourceDefinition, r.crd as never);
    await waitFor('CRDs served', () => admin.list(CertificateRequest.kind).then(() => true));
    for (const name of ['opkit-system', 'apps']) await plane.kubectl(['create', 'namespace', name]);
    await admin.create(ClusterRole, {
      metadata: { name: 'request-status-writer' },
      rules: [
        { apiGroups: ['cert.opkit.dev'], resources: ['certificaterequests'], verbs: ['get', 'list', 'create'] },
        { apiGroups: ['cert.opkit.dev'], resources: ['certificaterequests/status'], verbs: ['get', 'update', 'patch'] },
      ],
    });
    await user('mallory');
    await user('bob', ['issuers.cert.opkit.dev/apps.ca']);
    await user('carol', ['issuers.cert.opkit.dev/*']);
    await user('dave', ['clusterissuers.cert.opkit.dev/public']);

    const webhooks = await localWebhooks('opkit-system');
    manager = testManager(plane.kubeConfig, { name: 'cert-operator', webhook: { ...webhooks.options, configurationName: 'cert-operator' } }).manager;
    addCertificateControllers(manager, { ...defaultConfig({ clusterResourceNamespace: 'opkit-system' }), autoApprove: false });
    await manager.start();
    // As the chart registers them (there with the webhook Service), without a caBundle: the operator injects its CA.
    // Not the CSR check at creation (request-validation.ts, tested with cmctl): the requests here
    // carry a CSR nothing reads, and the last test is about one that check did not see.
    const hooks = certWebhooks(CERT_APIS.opkit).filter((h) => h.name !== requestValidation(CERT_APIS.opkit).name);
    const configs = webhookConfigurations('cert-operator', hooks, { url: webhooks.url });
    await admin.create(MutatingWebhookConfiguration, configs.mutating as never);
    await admin.create(ValidatingWebhookConfiguration, configs.validating as never);
  });
  afterAll(async () => {
    await manager?.stop();
    await plane?.stop();
  });

  let n = 0;
  const request = (issuerRef: object) =>
    waitFor('the webhooks to answer (their CA injected)', () =>
      admin
        .create(CertificateRequest.kind, { metadata: { namespace: 'apps', name: `r${++n}` }, spec: { request: CSR, issuerRef } } as never)
        .catch(() => undefined),
    );
  /** A request as the API server answered it (created, or as a decision left it). */
  type Answered = ObjectOf<typeof CertificateRequest.kind>;
  const decide = (who: string, cr: Answered, type: 'Approved' | 'Denied', status = 'True') =>
    users[who]!.patchStatus(
      CertificateRequest.kind,
      { namespace: 'apps', name: cr.metadata.name! },
      {
        status: {
          conditions: [
            ...(cr.status?.conditions ?? []),
            { type, status, reason: who, message: `${type} by ${who}`, lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') },
          ],
        },
      },
    );

  it('refuses an approval from someone who may only write the status, naming the signer they would need', async () => {
    const cr = await request({ name: 'ca' });
    await expect(decide('mallory', cr, 'Approved')).rejects.toThrow(
      /user "mallory" may not set Approved: it needs the "approve" verb on "signers" of group cert.opkit.dev for "issuers.cert.opkit.dev\/apps.ca"/,
    );
    await expect(decide('mallory', cr, 'Denied')).rejects.toThrow(/may not set Denied/);
  });

  it("allows whoever may approve the request's signer, by name or by wildcard, and no other signer", async () => {
    const forCa = await request({ name: 'ca' });
    await decide('bob', forCa, 'Approved');
    const forOther = await request({ name: 'other' });
    await expect(decide('bob', forOther, 'Approved')).rejects.toThrow(/issuers.cert.opkit.dev\/apps.other/);
    await decide('carol', forOther, 'Denied');
    const forCluster = await request({ name: 'public', kind: 'ClusterIssuer' });
    await expect(decide('bob', forCluster, 'Approved')).rejects.toThrow(/clusterissuers.cert.opkit.dev\/public/);
    await decide('dave', forCluster, 'Approved');
  });

  it('keeps a decision final: it cannot be removed, flipped or joined by the other', async () => {
    const cr = await request({ name: 'ca' });
    const approved = await decide('carol', cr, 'Approved');
    await expect(decide('carol', approved, 'Denied')).rejects.toThrow(/cannot be both Approved and Denied/);
    await expect(
      users.carol!.patchStatus(CertificateRequest.kind, { namespace: 'apps', name: cr.metadata.name! }, { status: { conditions: [] } }),
    ).rejects.toThrow(/the Approved condition is final once set/);
  });

  it("lets the operator's own status writes through (nothing about approval changes)", async () => {
    const cr = await request({ name: 'ca' });
    await waitFor('the operator to say it waits for approval', async () => {
      const x = await admin.get(CertificateRequest.kind, { namespace: 'apps', name: cr.metadata.name! });
      return x.status?.conditions?.some((c) => c.type === 'Ready' && c.reason === 'Pending');
    });
  });

  // A malformed request became Failed like any failure; cert-manager says InvalidRequest. (The
  // webhook refuses such a request at creation; this one was made while it was not registered.)
  it('marks an approved request whose CSR cannot be read InvalidRequest, final, with the reason', async () => {
    const cr = await request({ name: 'ca' });
    await decide('carol', cr, 'Approved');
    const invalid = await waitFor('InvalidRequest', async () => {
      const x = await admin.get(CertificateRequest.kind, { namespace: 'apps', name: cr.metadata.name! });
      return x.status?.conditions?.some((c) => c.type === 'InvalidRequest' && c.status === 'True') && x;
    });
    const conds = Object.fromEntries((invalid.status?.conditions ?? []).map((c) => [c.type, c]));
    expect(conds.InvalidRequest).toMatchObject({ reason: 'RequestParsingError', message: expect.stringMatching(/^the request's CSR cannot be parsed: /) });
    expect(conds.Ready).toMatchObject({ status: 'False', reason: 'Failed' });
    expect(invalid.status?.failureTime).toBeDefined();
  });
});
