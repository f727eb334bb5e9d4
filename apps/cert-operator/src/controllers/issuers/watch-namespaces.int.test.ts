import { Client, CustomResourceDefinition, Secret, Transport, type Manager } from '@opkit/runtime';
import { testManager } from '@opkit/runtime/testing';
import { createCertificateAuthority, startControlPlane, waitFor, type ControlPlane } from '@opkit/testing';
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../config.js';
import { CUSTOM_RESOURCES } from '../../manifests/generate.js';
import { addCertificateControllers } from '../index.js';
import { CERT_APIS } from '../../api/index.js';

const { Certificate, ClusterIssuer } = CERT_APIS.opkit;

const SYSTEM = 'opkit-system';
const APPS = 'apps';

/**
 * An operator that watches one namespace (the chart's watchNamespaces) still serves ClusterIssuers,
 * whose Secrets live in the cluster resource namespace it does not otherwise watch.
 */
describe('ClusterIssuers with watchNamespaces, against a real API server', () => {
  let plane: ControlPlane;
  let admin: Client;
  let manager: Manager;

  beforeAll(async () => {
    plane = await startControlPlane();
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
    for (const r of CUSTOM_RESOURCES) await admin.create(CustomResourceDefinition, r.crd as never);
    await waitFor('CRDs served', () => admin.list(Certificate.kind).then(() => true));
    for (const ns of [SYSTEM, APPS]) await plane.kubectl(['create', 'namespace', ns]);
    manager = testManager(plane.kubeConfig, { name: 'cert-operator', namespaces: [APPS] }).manager;
    addCertificateControllers(manager, defaultConfig({ clusterResourceNamespace: SYSTEM }));
    await manager.start();
  });
  afterAll(async () => {
    await manager?.stop();
    await plane?.stop();
  });

  it("a CA ClusterIssuer is Ready and signs for the watched namespace; its Secret's changes are seen", async () => {
    const ca = await createCertificateAuthority('opkit cluster CA', 30);
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    await admin.create(Secret, {
      metadata: { name: 'cluster-ca', namespace: SYSTEM },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': b64(ca.cert), 'tls.key': b64('not a key') },
    });
    await plane.kubectl(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'cert.opkit.dev/v1',
        kind: 'ClusterIssuer',
        metadata: { name: 'cluster-ca' },
        spec: { ca: { secretName: 'cluster-ca' } },
      }),
    });
    const ready = async () => (await admin.get(ClusterIssuer.kind, { name: 'cluster-ca' })).status?.conditions?.find((c) => c.type === 'Ready');
    // A broken pair first: the ClusterIssuer says why, on its condition.
    await waitFor(
      'the ClusterIssuer Ready=False, with the reason',
      async () => (await ready())?.status === 'False' && /tls\.key/.test((await ready())?.message ?? ''),
      { timeoutMs: 20_000 },
    );
    // Fixed in the unwatched namespace: seen, and the issuer turns Ready.
    await admin.patch(Secret, { namespace: SYSTEM, name: 'cluster-ca' }, { data: { 'tls.key': b64(ca.key) } });
    await waitFor('the ClusterIssuer Ready', async () => (await ready())?.status === 'True', { timeoutMs: 20_000 });

    await plane.kubectl(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'cert.opkit.dev/v1',
        kind: 'Certificate',
        metadata: { name: 'app', namespace: APPS },
        spec: { secretName: 'app-tls', dnsNames: ['app.example.com'], issuerRef: { name: 'cluster-ca', kind: 'ClusterIssuer' } },
      }),
    });
    await waitFor(
      'the Certificate Ready',
      async () => (await admin.get(Certificate.kind, { namespace: APPS, name: 'app' })).status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True',
      { timeoutMs: 30_000 },
    );
    const leaf = new X509Certificate(Buffer.from((await admin.get(Secret, { namespace: APPS, name: 'app-tls' })).data!['tls.crt']!, 'base64').toString());
    expect(leaf.checkIssued(new X509Certificate(ca.cert))).toBe(true);
  });
});
