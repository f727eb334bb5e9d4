import { Client, Secret, Transport, type Manager } from '@opkit/runtime';
import { testManager } from '@opkit/runtime/testing';
import {
  certManagerToolset,
  kubectlApply,
  startCertManager,
  startControlPlane,
  startLocalAcme,
  waitFor,
  waitForQuiet,
  workspaceApp,
  CERT_MANAGER_ACME_CONTROLLERS,
  CERT_MANAGER_CA_CONTROLLERS,
  type CertManagerToolset,
  type ControlPlane,
  type LocalAcme,
} from '@opkit/testing';
import { X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CERT_APIS } from '../api/index.js';
import type { CertificateObject } from '../api/v1/certificate.js';
import { defaultConfig } from '../config.js';
import { addCertificateControllers } from '../controllers/index.js';

const api = CERT_APIS['cert-manager'];
const { Certificate, Challenge, Order } = api;
const NS = 'shop';
const SOLVER = workspaceApp('acme-solver');
/** Issued by cert-manager before the takeover. */
const ISSUED = ['issued-0', 'issued-1', 'issued-2'];
/** Left in flight by cert-manager: their hosts are hidden from the cluster, so its self-check never passes. */
const IN_FLIGHT = ['inflight-0', 'inflight-1'];
const ALL = [...ISSUED, ...IN_FLIGHT];
const host = (name: string) => `${name}.shop.example.test`;
// cert-manager's self-check speaks to port 80 and cannot be told another: the stand-in must listen there.
const skip = process.getuid?.() !== 0 ? 'cert-manager’s HTTP-01 self-check needs port 80, which needs root' : undefined;

/**
 * Replacing cert-manager in place with ACME Orders in flight: cert-manager v1.21's controller
 * (its ACME controllers included, built from its module) issues certificates from Pebble over
 * HTTP-01 through solver pods (run by the ingress stand-in from our acme-solver image, which takes
 * cert-manager's solver arguments), and is stopped while some Orders wait on a self-check that
 * cannot pass. opkit, started in cert-manager mode, carries those Orders and their Challenges on
 * to the end, with the requests cert-manager made: no CertificateRequest, no Order made again, and
 * nothing for the certificates already issued. Back to cert-manager, it makes nothing either.
 */
describe.skipIf(!!skip)(`replacing cert-manager in place with ACME Orders in flight (Pebble, HTTP-01)${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let plane: ControlPlane;
  let admin: Client;
  let toolset: CertManagerToolset;
  let acme: LocalAcme;
  let certManager: { stop(): Promise<void>; recentOutput(lines?: number): string } | undefined;
  let manager: Manager | undefined;

  /** CertificateRequests and Orders the API server accepted since `since`, by who made them. */
  function created(since: Date) {
    const writes = plane.audit!.writes({ since }).filter((e) => e.verb === 'create' && (e.responseStatus?.code ?? 0) < 300);
    const of = (resource: string, agent: string) =>
      writes.filter((e) => e.objectRef?.resource === resource && (e.userAgent ?? '').startsWith(agent)).map((e) => e.objectRef!.name!);
    return {
      requests: { opkit: of('certificaterequests', 'cert-operator/'), certManager: of('certificaterequests', 'cert-manager') },
      orders: { opkit: of('orders', 'cert-operator/'), certManager: of('orders', 'cert-manager') },
    };
  }
  const certificate = async (name: string) => (await admin.get(Certificate.kind, { namespace: NS, name })) as CertificateObject;
  const ready = (c: CertificateObject) => c.status?.conditions?.find((x) => x.type === 'Ready')?.status === 'True';
  const serial = async (name: string) =>
    new X509Certificate(Buffer.from((await admin.get(Secret, { namespace: NS, name: `${name}-tls` })).data!['tls.crt']!, 'base64')).serialNumber;
  const startTheirs = () => {
    certManager = startCertManager(toolset, {
      kubeconfigPath: plane.kubeconfigPath,
      namespace: NS,
      clusterResourceNamespace: 'cert-manager',
      controllers: [...CERT_MANAGER_CA_CONTROLLERS, ...CERT_MANAGER_ACME_CONTROLLERS],
      // Solver pods of our acme-solver image (the stand-in runs it); the self-check resolves as Pebble does.
      extraArgs: [`--acme-http01-solver-image=${SOLVER.image.repository}:${SOLVER.image.tag}`, `--acme-http01-solver-nameservers=${acme.pebble.dnsServer}`],
    });
  };
  const withLog = (e: unknown) => {
    throw new Error(`${String(e)}\ncert-manager's log:\n${certManager?.recentOutput(30)}`);
  };

  beforeAll(async () => {
    if (!existsSync(SOLVER.bundle)) throw new Error(`${SOLVER.bundle} is missing: build it first (nx run @opkit/acme-solver:build)`);
    toolset = await certManagerToolset();
    // Simulated nodes: solver pods are scheduled and get addresses, and owned objects are collected.
    plane = await startControlPlane({ nodes: 1, audit: true });
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
    await kubectlApply(plane.kubeconfigPath, toolset.crds);
    await plane.kubectl(['wait', '--for=condition=Established', 'crd', '--all', '--timeout=60s']);
    for (const ns of [NS, 'cert-manager']) await plane.kubectl(['create', 'namespace', ns]);
    acme = await startLocalAcme(plane.kubeConfig, { [SOLVER.image.repository]: SOLVER.local }, 'nginx', 80);
    for (const name of IN_FLIGHT) acme.standIn.hideFromCluster(host(name));
    const items: object[] = [
      {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Issuer',
        metadata: { name: 'pebble', namespace: NS },
        spec: acme.issuerSpec('pebble-account'),
      },
      ...ALL.map((name) => ({
        apiVersion: 'cert-manager.io/v1',
        kind: 'Certificate',
        metadata: { name, namespace: NS },
        spec: { secretName: `${name}-tls`, dnsNames: [host(name)], issuerRef: { name: 'pebble', kind: 'Issuer', group: 'cert-manager.io' } },
      })),
    ];
    await plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }) });
  }, 900_000);
  afterAll(async () => {
    await certManager?.stop();
    await manager?.stop();
    await acme?.stop();
    await plane?.stop();
  });

  it('in-flight Orders completed by opkit with the requests cert-manager made; nothing made again for the issued; and back to cert-manager, nothing', async () => {
    const start = new Date();
    startTheirs();
    await waitFor(
      'cert-manager: the reachable certificates Ready, the hidden ones waiting on their self-check',
      async () => {
        const challenges = (await admin.list(Challenge.kind, { namespace: NS })).items;
        const waiting = challenges.filter((c) => IN_FLIGHT.some((n) => c.spec.dnsName === host(n)) && c.status?.presented && c.status.state === 'pending');
        const notReady = [];
        for (const name of ISSUED) if (!ready(await certificate(name))) notReady.push(name);
        if (!notReady.length && waiting.length === IN_FLIGHT.length) return true;
        // What a timeout reports: the certificates not Ready, and every Challenge's state.
        throw new Error(
          `not Ready: ${notReady.join(', ')}; challenges: ${challenges.map((c) => `${c.spec.dnsName} ${c.status?.state} presented=${c.status?.presented}: ${c.status?.reason}`).join('; ')}`,
        );
      },
      { timeoutMs: 180_000, intervalMs: 1_000 },
    ).catch(withLog);
    const theirs = created(start);
    const inFlightOrders = (await admin.list(Order.kind, { namespace: NS })).items.filter((o) => o.status?.state === 'pending').map((o) => o.metadata.name);
    expect(inFlightOrders).toHaveLength(IN_FLIGHT.length);
    const serials = new Map(await Promise.all(ISSUED.map(async (n) => [n, await serial(n)] as const)));

    // Scaled to zero with those Orders pending; opkit in cert-manager mode over the same objects.
    await certManager!.stop();
    certManager = undefined;
    const takeover = new Date();
    manager = testManager(plane.kubeConfig, { name: 'cert-operator', namespaces: [NS, 'cert-manager'] }).manager;
    addCertificateControllers(manager, {
      ...defaultConfig({
        clusterResourceNamespace: 'cert-manager',
        selfCheckNameservers: [acme.pebble.dnsServer],
        selfCheckPort: 80,
        // The hidden hosts never pass the cluster's self-check: the CA decides once this has passed.
        selfCheck: { requiredPasses: 2, intervalMs: 500, timeoutMs: 5_000 },
      }),
      api,
    });
    await manager.start();
    await waitFor(
      'every certificate Ready',
      async () => {
        const notReady = [];
        for (const name of ALL) {
          const c = await certificate(name);
          if (!ready(c)) notReady.push(`${name} ${JSON.stringify(c.status)}`);
        }
        if (!notReady.length) return true;
        const challenges = (await admin.list(Challenge.kind, { namespace: NS })).items;
        const orders = (await admin.list(Order.kind, { namespace: NS })).items;
        const requests = (await admin.list(api.CertificateRequest.kind, { namespace: NS })).items.filter(
          (r) => !ISSUED.some((n) => r.metadata.name?.startsWith(n)),
        );
        const writes = plane
          .audit!.writes({ since: takeover })
          .filter((e) => ['create', 'delete'].includes(e.verb) && !['events', 'leases', 'selfsubjectaccessreviews'].includes(e.objectRef?.resource ?? ''))
          .map((e) => `${e.verb} ${e.objectRef?.resource}/${e.objectRef?.name} ${e.responseStatus?.code} by ${(e.userAgent ?? '').slice(0, 14)}`);
        throw new Error(
          `not Ready: ${notReady.join(', ')}; challenges: ${challenges.map((c) => `${c.metadata.name} ${c.status?.state}: ${c.status?.reason}`).join('; ')}; orders: ${orders.map((o) => `${o.metadata.name} ${o.status?.state}: ${o.status?.reason}`).join('; ')}; requests: ${requests.map((r) => `${r.metadata.name} ${JSON.stringify(r.status?.conditions)}`).join('; ')}; writes since the takeover: ${writes.join('; ')}`,
        );
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    const after = await waitForQuiet('opkit to settle', () => created(takeover), { quietMs: 10_000, timeoutMs: 120_000 });
    expect(after, 'the in-flight Orders carried on: no request and no order made again').toEqual({
      requests: { opkit: [], certManager: [] },
      orders: { opkit: [], certManager: [] },
    });
    for (const name of IN_FLIGHT) expect((await certificate(name)).status?.revision, name).toBe(1);
    for (const name of ISSUED) {
      expect((await certificate(name)).status?.revision, name).toBe(1);
      expect(await serial(name), name).toBe(serials.get(name));
    }
    // Exactly one request per certificate in all: cert-manager's.
    expect(theirs.requests.certManager.sort()).toEqual(ALL.map((n) => `${n}-1`).sort());

    // Back to cert-manager: it takes everything as it is.
    await manager.stop();
    manager = undefined;
    const rollback = new Date();
    startTheirs();
    const back = await waitForQuiet('cert-manager to settle', () => created(rollback), { quietMs: 15_000, timeoutMs: 120_000 }).catch(withLog);
    expect(back).toEqual({ requests: { opkit: [], certManager: [] }, orders: { opkit: [], certManager: [] } });
    for (const name of ALL) expect(ready(await certificate(name)), name).toBe(true);
  }, 600_000);
});
