import { Client, Transport, type Manager } from '@opkit/runtime';
import { testManager } from '@opkit/runtime/testing';
import {
  certManagerToolset,
  freePort,
  kubectlApply,
  startControlPlane,
  startLocalAcme,
  waitFor,
  workspaceApp,
  type ControlPlane,
  type LocalAcme,
} from '@opkit/testing';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CERT_APIS } from '../../api/index.js';
import type { CertificateObject } from '../../api/v1/certificate.js';
import { defaultConfig } from '../../config.js';
import { addCertificateControllers } from '../index.js';

const api = CERT_APIS['cert-manager'];
const NS = 'shop';
const SOLVER = workspaceApp('acme-solver');

/**
 * opkit in cert-manager mode, on cert-manager's own CRDs, issuing over HTTP-01 from Pebble. Pebble
 * (v2.10) offers dns-persist-01 beside HTTP-01 for every name, a
 * challenge with no token; cert-manager's Order CRD requires a token of every challenge listed in
 * the Order's status, so an Order that recorded it could never write its status again.
 */
describe('cert-manager mode: ACME issuance from a CA that also offers challenges without a token', () => {
  let plane: ControlPlane;
  let admin: Client;
  let acme: LocalAcme;
  let manager: Manager;

  beforeAll(async () => {
    if (!existsSync(SOLVER.bundle)) throw new Error(`${SOLVER.bundle} is missing: build it first (nx run @opkit/acme-solver:build)`);
    const toolset = await certManagerToolset();
    plane = await startControlPlane({ nodes: 1 });
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
    await kubectlApply(plane.kubeconfigPath, toolset.crds);
    await plane.kubectl(['wait', '--for=condition=Established', 'crd', '--all', '--timeout=60s']);
    for (const ns of [NS, 'cert-manager']) await plane.kubectl(['create', 'namespace', ns]);
    const httpPort = await freePort();
    acme = await startLocalAcme(plane.kubeConfig, { [SOLVER.image.repository]: SOLVER.local }, 'nginx', httpPort);
    manager = testManager(plane.kubeConfig, { name: 'cert-operator', namespaces: [NS, 'cert-manager'] }).manager;
    addCertificateControllers(manager, {
      ...defaultConfig({
        clusterResourceNamespace: 'cert-manager',
        selfCheckNameservers: [acme.pebble.dnsServer],
        selfCheckPort: httpPort,
        selfCheck: { requiredPasses: 1, intervalMs: 500, timeoutMs: 5_000 },
      }),
      api,
    });
    await manager.start();
  });
  afterAll(async () => {
    await manager?.stop();
    await acme?.stop();
    await plane?.stop();
  });

  it('issues the certificate, and the Order records only the challenges that carry a token', async () => {
    await admin.create(api.Issuer.kind, {
      metadata: { name: 'pebble', namespace: NS },
      spec: acme.issuerSpec('pebble-account'),
    } as never);
    await admin.create(api.Certificate.kind, {
      metadata: { name: 'web', namespace: NS },
      spec: { secretName: 'web-tls', dnsNames: ['web.shop.example.test'], issuerRef: { name: 'pebble', kind: 'Issuer', group: 'cert-manager.io' } },
    } as never);
    await waitFor(
      'the certificate Ready',
      async () => {
        const c = (await admin.get(api.Certificate.kind, { namespace: NS, name: 'web' })) as CertificateObject;
        if (c.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True')) return true;
        const orders = (await admin.list(api.Order.kind, { namespace: NS })).items;
        throw new Error(
          `not Ready: ${JSON.stringify(c.status)}; orders: ${orders.map((o) => `${o.metadata.name} ${o.status?.state}: ${o.status?.reason}`).join('; ')}`,
        );
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    const [order] = (await admin.list(api.Order.kind, { namespace: NS })).items;
    const challenges = order!.status!.authorizations!.flatMap((a) => a.challenges ?? []);
    expect(challenges.map((c) => c.type)).toContain('http-01');
    for (const c of challenges) expect(c.token, c.type).toMatch(/^[\w-]+$/);
  });
});
