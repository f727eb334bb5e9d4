import {
  Client,
  CustomResourceDefinition,
  MutatingWebhookConfiguration,
  Secret,
  Transport,
  ValidatingWebhookConfiguration,
  webhookConfigurations,
  type Manager,
} from '@opkit/runtime';
import { localWebhooks, testManager } from '@opkit/runtime/testing';
import { buildCmctl, run, startControlPlane, waitFor, type ControlPlane } from '@opkit/testing';
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CERT_APIS } from '../api/index.js';
import type { CertificateObject } from '../api/v1/certificate.js';
import { defaultConfig } from '../config.js';
import { addCertificateControllers } from '../controllers/index.js';
import { certWebhooks } from '../webhooks/index.js';

const api = CERT_APIS['cert-manager'];
const { Certificate, CertificateRequest } = api;
const NS = 'shop';

/**
 * cmctl, cert-manager's CLI (built from github.com/cert-manager/cmctl/v2, unchanged), against the
 * cert operator in cert-manager mode on a real API server, with its webhooks registered as the chart
 * registers them and approval left to people (`autoApprove` off): `check api`, `approve`, `deny`,
 * `status certificate`, `inspect secret` and `renew`, each with what it prints asserted and what it
 * did seen in the cluster.
 */
describe('cmctl against the cert operator in cert-manager mode', () => {
  let plane: ControlPlane;
  let admin: Client;
  let manager: Manager | undefined;
  let cmctlPath: string;

  /** cmctl with the test cluster's kubeconfig: what it printed (it prints its results on stdout); a failure rejects with its output. */
  const cmctl = async (...args: string[]) => (await run(cmctlPath, args, { env: { ...process.env, KUBECONFIG: plane.kubeconfigPath } })).stdout;
  const certificate = (name: string) => admin.get(Certificate.kind, { namespace: NS, name }) as Promise<CertificateObject>;
  const condition = (c: { status?: { conditions?: { type: string; status: string; reason?: string }[] } }, type: string) =>
    c.status?.conditions?.find((x) => x.type === type);
  const request = (name: string) => admin.find(CertificateRequest.kind, { namespace: NS, name });
  const serialOf = async (secret: string) =>
    new X509Certificate(Buffer.from((await admin.get(Secret, { namespace: NS, name: secret })).data!['tls.crt']!, 'base64')).serialNumber.toLowerCase();

  beforeAll(async () => {
    cmctlPath = await buildCmctl();
    plane = await startControlPlane();
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
    for (const r of api.resources) await admin.create(CustomResourceDefinition, r.crd as never);
    await waitFor('CRDs served', () => admin.list(Certificate.kind).then(() => true));
    for (const ns of [NS, 'cert-manager']) await plane.kubectl(['create', 'namespace', ns]);

    const webhooks = await localWebhooks('cert-manager');
    manager = testManager(plane.kubeConfig, { name: 'cert-operator', webhook: { ...webhooks.options, configurationName: 'cert-operator' } }).manager;
    addCertificateControllers(manager, { ...defaultConfig({ clusterResourceNamespace: 'cert-manager' }), api, acme: false, autoApprove: false });
    await manager.start();
    // As the chart registers them (there with the webhook Service), without a caBundle: the operator injects its CA.
    const configs = webhookConfigurations('cert-operator', certWebhooks(api), { url: webhooks.url });
    await admin.create(MutatingWebhookConfiguration, configs.mutating as never);
    await admin.create(ValidatingWebhookConfiguration, configs.validating as never);
  }, 600_000);
  afterAll(async () => {
    await manager?.stop();
    await plane?.stop();
  });

  it('check api: the API is ready (a dry-run request stamped with its creator, a malformed one refused by webhook.cert-manager.io)', async () => {
    const out = await cmctl('check', 'api', '--wait=60s', '--interval=1s', '-n', NS);
    expect(out).toContain('The cert-manager API is ready');
    // Dry-run only: nothing was created.
    expect((await admin.list(CertificateRequest.kind, { namespace: NS })).items).toEqual([]);
  });

  it('approve: a request waiting for approval is approved by cmctl and issued; status certificate and inspect secret describe the result', async () => {
    await plane.kubectl(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [
          { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'selfsigned', namespace: NS }, spec: { selfSigned: {} } },
          {
            apiVersion: 'cert-manager.io/v1',
            kind: 'Certificate',
            metadata: { name: 'web', namespace: NS },
            spec: { secretName: 'web-tls', dnsNames: ['web.shop.example'], issuerRef: { name: 'selfsigned', kind: 'Issuer', group: 'cert-manager.io' } },
          },
        ],
      }),
    });
    await waitFor('the first request, waiting for approval', async () => condition((await request('web-1')) ?? {}, 'Ready')?.reason === 'Pending');

    // While it waits, cmctl shows the request of the next revision and that nobody approved it.
    const waiting = await cmctl('status', 'certificate', 'web', '-n', NS);
    expect(waiting).toMatch(
      /CertificateRequest:\n\s+Name: web-1\n\s+Namespace: shop\n\s+Conditions:\n\s+Ready: False, Reason: Pending, Message: Waiting for the CertificateRequest to be approved/,
    );

    expect(await cmctl('approve', 'web-1', '-n', NS, '--reason', 'ReviewedByTest', '--message', 'approved by the cmctl test')).toContain(
      "Approved CertificateRequest 'shop/web-1'",
    );
    expect(condition((await request('web-1'))!, 'Approved')).toMatchObject({ status: 'True', reason: 'ReviewedByTest' });
    await waitFor('the Certificate Ready', async () => condition(await certificate('web'), 'Ready')?.status === 'True', { timeoutMs: 30_000 });

    const serial = await serialOf('web-tls');
    const c = await certificate('web');
    const status = await cmctl('status', 'certificate', 'web', '-n', NS);
    expect(status).toContain('Name: web\nNamespace: shop\n');
    expect(status).toMatch(/Conditions:\n(\s+\w+: \w+, Reason: .*\n)*\s+Ready: True, Reason: Ready, Message: Certificate is up to date and has not expired\n/);
    expect(status).toMatch(/DNS Names:\n- web\.shop\.example\n/);
    expect(status).toMatch(/Issuer:\n\s+Name: selfsigned\n\s+Kind: Issuer\n\s+Conditions:\n\s+Ready: True/);
    expect(status).toMatch(/Secret:\n\s+Name: web-tls\n/);
    // As Go's hex of big.Int.Bytes(): no leading zero bytes, two digits a byte.
    const goHex = serial.replace(/^0+/, '');
    expect(status).toContain(`Serial Number: ${goHex.length % 2 ? `0${goHex}` : goHex}`);
    expect(status).toContain(`Not After: ${c.status!.notAfter}`);
    expect(status).toContain(`Renewal Time: ${c.status!.renewalTime}`);
    // Issued: no request for the next revision yet.
    expect(status).toContain('No CertificateRequest found for this Certificate');
    // The events cmctl lists are the operator's, on the Certificate.
    expect(status).toMatch(/Events:\n[\s\S]*Issuing[\s\S]*The certificate has been successfully issued/);

    const inspected = await cmctl('inspect', 'secret', 'web-tls', '-n', NS);
    expect(inspected).toMatch(/Valid for:\n\tDNS Names: \n\t\t- web\.shop\.example\n/);
    expect(inspected).toContain('Is a CA certificate: false');
  });

  it('renew: cmctl marks the Certificate for renewal and the operator issues it anew, once; deny: a denied request fails and the old certificate stays', async () => {
    const before = await serialOf('web-tls');
    expect(await cmctl('renew', 'web', '-n', NS)).toContain('Manually triggered issuance of Certificate shop/web');
    await waitFor('the renewal request', () => request('web-2'));
    await cmctl('approve', 'web-2', '-n', NS);
    await waitFor('revision 2 issued', async () => (await certificate('web')).status?.revision === 2, { timeoutMs: 30_000 });
    expect(await serialOf('web-tls')).not.toBe(before);
    expect(condition(await certificate('web'), 'Ready')?.status).toBe('True');
    // Exactly one request for the one renewal.
    await new Promise((r) => setTimeout(r, 2_000));
    expect(await request('web-3')).toBeUndefined();

    const renewed = await serialOf('web-tls');
    await cmctl('renew', 'web', '-n', NS);
    await waitFor('the next request', () => request('web-3'));
    expect(await cmctl('deny', 'web-3', '-n', NS, '--reason', 'ChangeFreeze', '--message', 'no new certificates this week')).toContain(
      "Denied CertificateRequest 'shop/web-3'",
    );
    await waitFor('the request failed as denied', async () => condition((await request('web-3'))!, 'Ready')?.reason === 'Denied');
    await waitFor('the Certificate says the issuance failed', async () => {
      const c = await certificate('web');
      if (condition(c, 'Issuing')?.status !== 'False') throw new Error(JSON.stringify(c.status));
      return true;
    });
    const c = await certificate('web');
    // The certificate it has is still good: Ready stays, and the Secret keeps it.
    expect(condition(c, 'Ready')?.status).toBe('True');
    expect(c.status?.revision).toBe(2);
    expect(await serialOf('web-tls')).toBe(renewed);
    const status = await cmctl('status', 'certificate', 'web', '-n', NS);
    expect(status).toMatch(/CertificateRequest:\n\s+Name: web-3\n[\s\S]*Denied: True, Reason: ChangeFreeze, Message: no new certificates this week/);
    expect(status).toContain(
      'Issuing: False, Reason: ChangeFreeze, Message: The certificate request has failed to complete and will be retried: no new certificates this week',
    );
  });
});
