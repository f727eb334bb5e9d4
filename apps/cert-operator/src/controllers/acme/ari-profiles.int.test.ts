import { Client, CoreEvent, CustomResourceDefinition, Secret, Transport, type Manager, type ObjectOf } from '@opkit/runtime';
import { testManager } from '@opkit/runtime/testing';
import {
  createCertificateAuthority,
  freePort,
  httpGet,
  startControlPlane,
  startIngressStandIn,
  startPebble,
  waitFor,
  workspaceApp,
  type ControlPlane,
  type IngressStandIn,
  type Pebble,
} from '@opkit/testing';
import { X509Certificate } from 'node:crypto';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CERT_APIS } from '../../api/index.js';
import { defaultConfig } from '../../config.js';
import { CUSTOM_RESOURCES } from '../../manifests/generate.js';
import { addCertificateControllers } from '../index.js';

const { Certificate, CertificateRequest, Issuer, Order } = CERT_APIS.opkit;
type CertificateObject = ObjectOf<typeof Certificate.kind>;
const SYSTEM = 'opkit-system';
const SOLVER = workspaceApp('acme-solver');
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const cond = (c: { status?: { conditions?: { type: string; status: string; lastTransitionTime?: string }[] } }, type: string) =>
  c.status?.conditions?.find((x) => x.type === type);
const leafOf = (s: { data?: Record<string, string> }) =>
  Buffer.from(s.data?.['tls.crt'] ?? '', 'base64')
    .toString()
    .match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/)![0];

/**
 * ACME Renewal Information (RFC 9773) against Pebble, which serves ARI: the window the CA suggests
 * for each certificate reaches the Certificate's status and decides its renewal; a window the CA
 * moves earlier renews at once, naming the certificate replaced; what a restart or a malformed
 * answer does. Then ACME profiles, which Pebble offers as Let's Encrypt does (default and
 * shortlived). HTTP-01 through the ingress stand-in and the solver, as in acme.int.test.ts.
 */
describe('ACME Renewal Information and profiles against Pebble', () => {
  let plane: ControlPlane;
  let admin: Client;
  let manager: Manager;
  let standIn: IngressStandIn;
  let pebble: Pebble;
  let n = 0;

  const apply = (obj: object) => plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify(obj) });
  const getCert = (namespace: string, name = 'web') => admin.get(Certificate.kind, { namespace, name });
  const leaf = async (namespace: string) => leafOf(await admin.get(Secret, { namespace, name: 'web' }));
  const events = async (namespace: string, reason: string) =>
    (await admin.list(CoreEvent, { namespace })).items.filter((e) => e.reason === reason).map((e) => e.message ?? '');
  /** The next check brought forward: what the passing of `nextCheck` would do, without waiting six hours. */
  const checkNow = (namespace: string) =>
    admin.patch(
      Certificate.kind,
      { namespace, name: 'web' },
      { status: { acme: { ari: { nextCheck: new Date(Date.now() - 1_000).toISOString() } } } },
      'merge',
      { subresource: 'status' },
    );
  const until = <T>(what: string, namespace: string, f: (c: CertificateObject) => T | undefined | false, timeoutMs = 60_000) =>
    waitFor(what, async () => f(await getCert(namespace)), { timeoutMs, intervalMs: 250 });

  /** A namespace with a Pebble issuer (Ready `ready`, with `acme` added to its spec). */
  async function withIssuer(acme: object = {}, ready = 'True') {
    const namespace = `ari${++n}`;
    await plane.kubectl(['create', 'namespace', namespace]);
    await apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'Issuer',
      metadata: { name: 'le', namespace },
      spec: {
        acme: {
          server: pebble.directoryUrl,
          caBundle: Buffer.from(pebble.tlsCaPem).toString('base64'),
          privateKeySecretRef: { name: 'le-account' },
          solvers: [{ http01: { ingress: { ingressClassName: 'nginx' } } }],
          ...acme,
        },
      },
    });
    const issuer = await waitFor(
      `the issuer Ready=${ready}`,
      async () => {
        const i = await admin.get(Issuer.kind, { namespace, name: 'le' });
        return cond(i, 'Ready')?.status === ready && i;
      },
      { timeoutMs: 30_000 },
    );
    return { namespace, issuer };
  }
  const certificate = (namespace: string, spec: object = {}, annotations: Record<string, string> = {}) =>
    apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'Certificate',
      metadata: { name: 'web', namespace, annotations },
      spec: { secretName: 'web', issuerRef: { name: 'le' }, dnsNames: [`shop.${namespace}.example.test`], privateKey: { algorithm: 'ECDSA' }, ...spec },
    });

  /** A namespace with a Pebble issuer and one Certificate, issued, and the CA's first renewal info about it. */
  async function issued(): Promise<{ namespace: string; c: CertificateObject }> {
    const { namespace } = await withIssuer();
    await certificate(namespace);
    const c = await until(
      'the renewal info of the first certificate',
      namespace,
      (c) => cond(c, 'Ready')?.status === 'True' && c.status?.acme?.ari?.suggestedWindow && c,
    );
    return { namespace, c };
  }

  beforeAll(async () => {
    if (!existsSync(SOLVER.bundle)) throw new Error(`${SOLVER.bundle} is missing: build it first (nx run @opkit/acme-solver:build)`);
    plane = await startControlPlane({ nodes: 1, audit: true });
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
    for (const r of CUSTOM_RESOURCES) await admin.create(CustomResourceDefinition, r.crd as never);
    await waitFor('CRDs served', () => admin.list(Certificate.kind).then(() => true));
    await plane.kubectl(['create', 'namespace', SYSTEM]);
    const httpPort = await freePort();
    standIn = await startIngressStandIn(plane.kubeConfig, { port: httpPort, images: { [SOLVER.image.repository]: SOLVER.local }, ingressClass: 'nginx' });
    // Let's Encrypt's six-day profile beside the default (Pebble then gives orders that name no
    // profile either one, at random: nothing here depends on which).
    // Authorizations always reused within an account (each test's namespace has its own): a renewal
    // then solves no challenge, as a renewal at Let's Encrypt within 30 days of the last does not.
    pebble = await startPebble({
      httpPort,
      profiles: { shortlived: { validityPeriod: 518_400, description: 'six-day certificates' } },
      env: { PEBBLE_AUTHZREUSE: '100' },
    });
    await startManager(httpPort);
  });
  let port = 0;
  async function startManager(httpPort = port) {
    port = httpPort;
    manager = testManager(plane.kubeConfig, { name: 'cert-operator' }).manager;
    addCertificateControllers(
      manager,
      defaultConfig({
        clusterResourceNamespace: SYSTEM,
        selfCheckNameservers: [pebble.dnsServer],
        selfCheckPort: httpPort,
        selfCheck: { requiredPasses: 1, intervalMs: 250, timeoutMs: 20_000 },
      }),
    );
    await manager.start();
  }
  afterEach(async (ctx) => {
    if (ctx.task.result?.state !== 'fail') return;
    const out = await plane.kubectl(['get', 'certificates,orders,events', '-n', `ari${n}`, '-o', 'yaml']).catch((e: Error) => ({ stdout: e.message }));
    console.log(`--- ari${n} ---\n${out.stdout}`);
  });
  afterAll(async () => {
    await manager?.stop();
    await standIn?.stop();
    await pebble?.stop();
    await plane?.stop();
  });

  it("records the CA's window for the certificate and renews at a point inside it, instead of at two thirds of the lifetime", async () => {
    const { namespace, c } = await issued();
    const cert = new X509Certificate(await leaf(namespace));
    const [notBefore, notAfter] = [Date.parse(cert.validFrom), Date.parse(cert.validTo)];
    // Pebble's own window: a day either side of the point a third of the lifetime before expiry.
    const ideal = notAfter - (notAfter + 1_000 - notBefore) / 3;
    const ari = c.status!.acme!.ari!;
    expect(Math.abs(Date.parse(ari.suggestedWindow!.start) - (ideal - DAY))).toBeLessThan(1_000);
    expect(Math.abs(Date.parse(ari.suggestedWindow!.end) - (ideal + DAY))).toBeLessThan(1_000);
    // Asked again at Pebble's Retry-After (6 hours), spread by a tenth.
    const nextIn = Date.parse(ari.nextCheck!) - Date.parse(ari.lastChecked!);
    expect(nextIn).toBeGreaterThanOrEqual(5.4 * HOUR - 1_000);
    expect(nextIn).toBeLessThanOrEqual(6.6 * HOUR + 1_000);
    expect(ari.lastError).toBeUndefined();
    const renewal = await until('the renewal time inside the window', namespace, (c) => {
      const at = Date.parse(c.status?.renewalTime ?? '');
      return at >= Date.parse(ari.suggestedWindow!.start) && at < Date.parse(ari.suggestedWindow!.end) && at;
    });
    expect(renewal).not.toBe(Math.floor(notAfter - (notAfter - notBefore) / 3));
    const windows = await waitFor('the RenewalWindow event', async () => {
      const m = await events(namespace, 'RenewalWindow');
      return m.length > 0 && m;
    });
    expect(windows).toEqual([expect.stringMatching(/^The ACME server suggests renewing between /)]);

    // A new process asks nothing before the next check: the status remembers it.
    await manager.stop();
    await startManager();
    await new Promise((r) => setTimeout(r, 3_000));
    const after = await getCert(namespace);
    expect(after.status?.acme?.ari).toEqual(ari);
    expect(after.status?.revision).toBe(1);
  });

  it('renews at once when the CA moves the window into the past, naming the certificate it replaces; then asks about the new one', async () => {
    const { namespace, c } = await issued();
    const first = await leaf(namespace);
    // What a CA does after a revocation event (Pebble's own answer for a revoked certificate).
    await pebble.setRenewalInfo(first, {
      suggestedWindow: { start: new Date(Date.now() - 2 * HOUR).toISOString(), end: new Date(Date.now() - HOUR).toISOString() },
    });
    await checkNow(namespace);
    const renewed = await until('the second certificate', namespace, (c) => c.status?.revision === 2 && cond(c, 'Ready')?.status === 'True' && c);
    expect(await leaf(namespace)).not.toBe(first);
    // The renewal order named its predecessor, and Pebble (which checks the account, the serial and
    // the names) accepted it as such.
    const renewals = (await admin.list(Order.kind, { namespace })).items.filter((o) => o.spec.replaces);
    expect(renewals.map((o) => [o.spec.replaces, o.status?.state])).toEqual([[expect.stringMatching(/^[\w-]+\.[\w-]+$/), 'valid']]);
    expect(await events(namespace, 'ReplacesRefused')).toEqual([]);
    // The window of the first certificate is not kept for the second: it is asked about anew.
    const fresh = await until('renewal info about the second certificate', namespace, (x) => {
      const w = x.status?.acme?.ari?.suggestedWindow;
      return w && Date.parse(w.start) > Date.now() && x;
    });
    expect(Date.parse(fresh.status!.acme!.ari!.lastChecked!)).toBeGreaterThan(Date.parse(c.status!.acme!.ari!.lastChecked!));
    expect(renewed.status?.revision).toBe(2);
    // Renewed once: the second certificate, signed within a second of the first on reused
    // authorizations, can have the first's notAfter, and was renewed again for the first's window.
    await new Promise((r) => setTimeout(r, 3_000));
    expect((await getCert(namespace)).status?.revision).toBe(2);
    expect((await admin.list(Order.kind, { namespace })).items.filter((o) => o.spec.replaces)).toHaveLength(1);
  });

  // Each step of a renewal was written on the request and again on the Certificate: 22.5 API
  // writes per renewal (bench/cert/short-lived.bench.ts), when what a user can see of a renewal
  // that takes a second is its start and its end. Progress shows only past 10 s (progress.ts).
  it('a renewal that takes a second writes its start and its end, not each step: twice on the request, once per change on the Certificate', async () => {
    const { namespace } = await issued();
    const first = await leaf(namespace);
    const since = new Date();
    await pebble.setRenewalInfo(first, {
      suggestedWindow: { start: new Date(Date.now() - 2 * HOUR).toISOString(), end: new Date(Date.now() - HOUR).toISOString() },
    });
    await checkNow(namespace);
    const renewed = await until('renewal info about the second certificate', namespace, (x) => {
      const w = x.status?.acme?.ari?.suggestedWindow;
      return x.status?.revision === 2 && w && Date.parse(w.start) > Date.now() && x;
    });
    await new Promise((r) => setTimeout(r, 2_000)); // a last write in flight
    const request = (await admin.list(CertificateRequest.kind, { namespace })).items.find((r) => r.metadata.name === 'web-2')!;
    const took = Date.parse(cond(request, 'Ready')!.lastTransitionTime!) - Date.parse(request.metadata.creationTimestamp!);
    const writes = plane.audit!.writes({ since }).filter((e) => e.userAgent?.startsWith('cert-operator/') && e.objectRef?.namespace === namespace);
    const statusWrites = (resource: string, name: string) =>
      writes.filter((e) => e.objectRef?.resource === resource && e.objectRef.name === name && e.objectRef.subresource === 'status').length;
    console.log(
      `renewal: request issued ${took} ms after it was made; writes`,
      writes.map((e) => `${e.verb} ${e.objectRef?.resource}/${e.objectRef?.subresource ?? ''} ${e.objectRef?.name}`),
    );
    expect(took).toBeLessThan(8_000);
    // Approved, then issued.
    expect(statusWrites('certificaterequests', 'web-2')).toBe(2);
    // The moved window (and the renewal time it gives, in the same write), the renewal started,
    // issued, the new certificate's window (and renewal time).
    expect(statusWrites('certificates', 'web')).toBe(4);
    expect(renewed.status?.renewalTime).toBeDefined();
  });

  it("says on the Certificate when the CA's answer is unusable, keeps the window it gave before, and stays Ready", async () => {
    const { namespace, c } = await issued();
    await pebble.setRenewalInfo(await leaf(namespace), '{"suggestedWindow": {"start": "tomorrow"}}');
    await checkNow(namespace);
    const failed = await until('the error in the status', namespace, (x) => !!x.status?.acme?.ari?.lastError && x);
    expect(failed.status!.acme!.ari!.lastError).toMatch(/renewal info is unusable: suggestedWindow\.start is not an RFC 3339 timestamp/);
    expect(failed.status!.acme!.ari!.suggestedWindow).toEqual(c.status!.acme!.ari!.suggestedWindow);
    // Asked again in about an hour, not in a loop.
    const nextIn = Date.parse(failed.status!.acme!.ari!.nextCheck!) - Date.now();
    expect(nextIn).toBeGreaterThan(0.8 * HOUR);
    expect(nextIn).toBeLessThan(1.2 * HOUR);
    expect(cond(failed, 'Ready')?.status).toBe('True');
    const errors = await waitFor('the ARIError event', async () => {
      const m = await events(namespace, 'ARIError');
      return m.length > 0 && m;
    });
    expect(errors).toEqual([expect.stringMatching(/^Could not get renewal information from the ACME server: /)]);
  });

  it('orders in the profile the issuer names: a six-day certificate for an IP address and a name, validated over HTTP-01', async () => {
    const { namespace } = await withIssuer({ profile: 'shortlived' });
    await certificate(namespace, { ipAddresses: ['127.0.0.1'] });
    const c = await until('the short-lived certificate', namespace, (c) => cond(c, 'Ready')?.status === 'True' && c);
    const cert = new X509Certificate(await leaf(namespace));
    expect(cert.subjectAltName?.split(', ').sort()).toEqual(['DNS:shop.' + namespace + '.example.test', 'IP Address:127.0.0.1']);
    // Pebble's shortlived profile: six days (518,400 s, counted inclusively).
    expect((Date.parse(cert.validTo) - Date.parse(cert.validFrom)) / 1000).toBeCloseTo(518_400, -1);
    expect(Date.parse(c.status!.notAfter!) - Date.parse(c.status!.notBefore!)).toBeLessThan(7 * DAY);
    const orders = (await admin.list(Order.kind, { namespace })).items;
    expect(orders.map((o) => o.spec.profile)).toEqual(['shortlived']);
  });

  it('says on the issuer, and on the Certificate, when a profile is one the CA does not offer; a tenant cannot override a ClusterIssuer', async () => {
    const { issuer } = await withIssuer({ profile: 'longlived' }, 'False');
    expect(cond(issuer, 'Ready')).toMatchObject({
      reason: 'UnknownProfile',
      message: 'acme.profile: the ACME server offers no profile "longlived"; it offers: default (default), shortlived (six-day certificates)',
    });

    // One Certificate's own profile (its annotation) under an issuer that names none.
    const { namespace } = await withIssuer();
    await certificate(namespace, {}, { 'acme.cert.opkit.dev/profile': 'tiny' });
    const failed = await until('the issuance to fail', namespace, (c) => cond(c, 'Issuing')?.status === 'False' && c);
    expect(failed.status?.conditions?.find((x) => x.type === 'Issuing')).toMatchObject({
      message: expect.stringContaining('the ACME server offers no profile "tiny"; it offers: default (default), shortlived (six-day certificates)'),
    });
    expect((await admin.list(Order.kind, { namespace })).items.map((o) => [o.spec.profile, o.status?.state])).toEqual([['tiny', 'errored']]);

    // Under a ClusterIssuer the platform decides: a tenant's annotation is refused, saying so.
    await apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'ClusterIssuer',
      metadata: { name: 'platform' },
      spec: {
        acme: {
          server: pebble.directoryUrl,
          caBundle: Buffer.from(pebble.tlsCaPem).toString('base64'),
          privateKeySecretRef: { name: 'platform-account' },
          solvers: [{ http01: { ingress: { ingressClassName: 'nginx' } } }],
        },
      },
    });
    const tenant = `ari${++n}`;
    await plane.kubectl(['create', 'namespace', tenant]);
    await apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'Certificate',
      metadata: { name: 'web', namespace: tenant, annotations: { 'acme.cert.opkit.dev/profile': 'shortlived' } },
      spec: { secretName: 'web', issuerRef: { name: 'platform', kind: 'ClusterIssuer' }, dnsNames: [`shop.${tenant}.example.test`] },
    });
    const refused = await until('refused under the ClusterIssuer', tenant, (c) => cond(c, 'Issuing')?.status === 'False' && c);
    expect(refused.status?.conditions?.find((x) => x.type === 'Issuing')?.message).toContain(
      'the acme.cert.opkit.dev/profile annotation is honoured under an Issuer only: ClusterIssuer "platform" decides the profile',
    );
    expect((await admin.list(Order.kind, { namespace: tenant })).items).toEqual([]);
  });

  it("issues through a directory served on another origin than the CA's API (the account's URL is not on the directory's host)", async () => {
    // A directory of its own, naming Pebble's resources: as a CA whose directory sits apart from its API.
    const ca = await createCertificateAuthority('opkit test directory', 1);
    const serving = await ca.issue({ commonName: 'localhost', usage: 'server', ipAddresses: ['127.0.0.1'] });
    const directory = (await httpGet(pebble.directoryUrl, { ca: pebble.tlsCaPem })).body;
    const server = createHttpsServer({ cert: serving.cert, key: serving.key }, (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(directory),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { namespace } = await withIssuer({
        server: `https://127.0.0.1:${(server.address() as AddressInfo).port}/dir`,
        caBundle: Buffer.from(`${pebble.tlsCaPem}\n${ca.cert}`).toString('base64'),
      });
      await certificate(namespace);
      await until('issued', namespace, (c) => cond(c, 'Ready')?.status === 'True');
    } finally {
      server.close();
    }
  });
});
