import { Client, CoreEvent, CustomResourceDefinition, Secret, Transport, type Manager } from '@opkit/runtime';
import { metricValue, scrape, testManager } from '@opkit/runtime/testing';
import {
  bindUnavailable,
  startBind,
  startControlPlane,
  startDnsWebhookSolver,
  startPebble,
  waitFor,
  type Bind,
  type ControlPlane,
  type DnsWebhookSolver,
  type Pebble,
} from '@opkit/testing';
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../config.js';
import { query } from '../../dns/client.js';
import { TYPE } from '../../dns/message.js';
import { callWebhookSolver } from '../../dns/webhook-solver.js';
import { CUSTOM_RESOURCES } from '../../manifests/generate.js';
import { splitPem } from '../../pki/inspect.js';
import { addCertificateControllers } from '../index.js';
import { CERT_APIS } from '../../api/index.js';

const { Certificate, Challenge, Issuer } = CERT_APIS.opkit;

const SYSTEM = 'opkit-system';
const skip = bindUnavailable();
const cond = (o: { status?: { conditions?: { type: string; status: string; reason: string; message: string }[] } }, type: string) =>
  o.status?.conditions?.find((c) => c.type === type);

describe.skipIf(!!skip)(`ACME DNS-01 against Pebble and a real authoritative DNS server (BIND 9)${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let plane: ControlPlane;
  let admin: Client;
  let manager: Manager;
  let bind: Bind;
  let pebble: Pebble;
  let solver: DnsWebhookSolver | undefined;
  let n = 0;
  const apply = (obj: object) => plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify(obj) });
  const ns = async () => {
    const name = `dns${++n}`;
    await plane.kubectl(['create', 'namespace', name]);
    return name;
  };
  const issuer = async (namespace: string, name: string, dns01: object, ready = 'True') => {
    await apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'Issuer',
      metadata: { name, namespace },
      spec: {
        acme: {
          server: pebble.directoryUrl,
          caBundle: Buffer.from(pebble.tlsCaPem).toString('base64'),
          privateKeySecretRef: { name: `${name}-account` },
          solvers: [{ dns01 }],
        },
      },
    });
    return waitFor(
      `Issuer ${name} Ready=${ready}`,
      async () => {
        const i = await admin.get(Issuer.kind, { namespace, name });
        return cond(i, 'Ready')?.status === ready && i;
      },
      { timeoutMs: 30_000 },
    );
  };
  /** Applies a wildcard Certificate and waits for it Ready; a timeout says what its Challenges and its Issuing condition say. */
  const issueWild = async (namespace: string, issuerName: string, dnsNames: string[]) => {
    await apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'Certificate',
      metadata: { name: 'wild', namespace },
      spec: { secretName: 'wild-tls', issuerRef: { name: issuerName }, dnsNames, privateKey: { algorithm: 'ECDSA' } },
    });
    return waitFor(
      'the wildcard Certificate Ready',
      async () => {
        const c = await admin.get(Certificate.kind, { namespace, name: 'wild' });
        if (cond(c, 'Ready')?.status === 'True') return c;
        const challenges = (await admin.list(Challenge.kind, { namespace })).items.map((ch) => `${ch.status?.state}: ${ch.status?.reason}`);
        throw new Error(`challenges [${challenges.join('; ')}], Issuing: ${cond(c, 'Issuing')?.message}`);
      },
      { timeoutMs: 120_000, intervalMs: 250 },
    );
  };
  const rfc2136 = (secretName = 'tsig') => ({
    rfc2136: { nameserver: bind.server, tsigKeyName: bind.tsig.name, tsigAlgorithm: 'HMACSHA256', tsigSecretSecretRef: { name: secretName, key: 'secret' } },
  });
  const txt = async (name: string) =>
    (await query(bind.server, name, TYPE.TXT)).answers.filter((r) => r.type === TYPE.TXT).map((r) => (r.value as string[]).join(''));

  beforeAll(async () => {
    bind = await startBind({ zone: 'example.test', onPort53: true });
    pebble = await startPebble({ resolver: bind.server });
    plane = await startControlPlane();
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
    for (const r of CUSTOM_RESOURCES) await admin.create(CustomResourceDefinition, r.crd as never);
    await waitFor('CRDs served', () => admin.list(Challenge.kind).then(() => true));
    await plane.kubectl(['create', 'namespace', SYSTEM]);
    manager = testManager(plane.kubeConfig, { name: 'cert-operator' }).manager;
    // The production self-check where BIND can answer on port 53 (root): the zone's NS record
    // found through the "recursive" server, then the TXT record asked of that authoritative
    // server on port 53. Elsewhere, the recursive server alone (--dns01-recursive-nameservers-only).
    addCertificateControllers(
      manager,
      defaultConfig({
        clusterResourceNamespace: SYSTEM,
        dns01: { recursiveNameservers: [bind.server], recursiveOnly: !bind.authoritative, checkIntervalMs: 1_000 },
      }),
    );
    if (!bind.authoritative) console.log('BIND cannot serve on port 53 here (not root): the self-check asks the recursive server only');
    await manager.start();
  });
  afterAll(async () => {
    await manager?.stop();
    await solver?.stop();
    await pebble?.stop();
    await plane?.stop();
    await bind?.stop();
  });

  it('issues *.example.test and example.test over DNS-01 with RFC 2136 updates; Pebble validates against BIND; the TXT records are removed afterwards', async () => {
    const namespace = await ns();
    await apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'tsig', namespace }, stringData: { secret: bind.tsig.secret } });
    await issuer(namespace, 'le', rfc2136());
    const requestsBefore = metricValue((await scrape(manager, '/metrics')).body, 'certmanager_http_acme_client_request_count');
    const updatesBefore = bind.updates();
    const t0 = Date.now();
    const ready = await issueWild(namespace, 'le', ['*.example.test', 'example.test']);
    const seconds = (Date.now() - t0) / 1000;
    const requests = metricValue((await scrape(manager, '/metrics')).body, 'certmanager_http_acme_client_request_count') - requestsBefore;
    console.log(`DNS-01, *.example.test + example.test: Ready in ${seconds.toFixed(1)} s, ${requests} ACME requests`);
    expect(ready.status?.revision).toBe(1);
    const secret = await admin.get(Secret, { namespace, name: 'wild-tls' });
    const [leaf, ...rest] = splitPem(Buffer.from(secret.data!['tls.crt']!, 'base64').toString()).map((p) => new X509Certificate(p)) as [
      X509Certificate,
      ...X509Certificate[],
    ];
    expect(leaf.subjectAltName?.split(', ').sort()).toEqual(['DNS:*.example.test', 'DNS:example.test']);
    const chain = [leaf, ...rest, new X509Certificate(await pebble.root())];
    for (let i = 0; i < chain.length - 1; i++) expect(chain[i]!.verify(chain[i + 1]!.publicKey)).toBe(true);
    const events = (await admin.list(CoreEvent, { namespace, fieldSelector: 'involvedObject.kind=Challenge,reason=Presented' })).items.map((e) => e.message);
    expect(events).toContain('Presented challenge using DNS-01 challenge mechanism: TXT record _acme-challenge.example.test in zone example.test');
    // The self-check asked the zone's authoritative server (port 53, found by its NS record).
    if (bind.authoritative) expect(bind.queries('_acme-challenge.example.test', 'TXT', bind.authoritative)).toBeGreaterThan(0);
    await waitFor(
      'the challenges gone, their TXT records removed',
      async () => !(await admin.list(Challenge.kind, { namespace })).items.length && !(await txt('_acme-challenge.example.test')).length,
      { timeoutMs: 30_000 },
    );
    // Each record added once and removed once: a DNS provider's API is called no more than that.
    await new Promise((r) => setTimeout(r, 2_000));
    expect(bind.updates() - updatesBefore).toBe(4);
  }, 180_000);

  it("issues *.example.test through a cert-manager DNS webhook solver, called through the API server's aggregation layer as cert-manager calls it; a solver not served, or failing, is named on the Challenge", async () => {
    // cert-manager's webhook server framework around its own RFC 2136 solver (built from its
    // module, unchanged), registered as an APIService, updating BIND with the TSIG key it reads.
    const hook = await startDnsWebhookSolver(plane, { groupName: 'acme.dns-solver.test' });
    solver = hook;
    const namespace = await ns();
    await apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'tsig', namespace }, stringData: { secret: bind.tsig.secret } });
    const webhook = (secretName: string, groupName = hook.groupName) => ({
      webhook: {
        groupName,
        solverName: hook.solverName,
        config: { nameserver: bind.server, tsigKeyName: bind.tsig.name, tsigAlgorithm: 'HMACSHA256', tsigSecretSecretRef: { name: secretName, key: 'secret' } },
      },
    });
    await issuer(namespace, 'hook', webhook('tsig'));
    const updatesBefore = bind.updates();
    const t0 = Date.now();
    const ready = await issueWild(namespace, 'hook', ['*.example.test']);
    console.log(`DNS-01 through a webhook solver, *.example.test: Ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    expect(ready.status?.revision).toBe(1);
    const secret = await admin.get(Secret, { namespace, name: 'wild-tls' });
    const leaf = new X509Certificate(splitPem(Buffer.from(secret.data!['tls.crt']!, 'base64').toString())[0]!);
    expect(leaf.subjectAltName).toBe('DNS:*.example.test');
    const events = (await admin.list(CoreEvent, { namespace, fieldSelector: 'involvedObject.kind=Challenge,reason=Presented' })).items.map((e) => e.message);
    expect(events).toEqual([
      'Presented challenge using DNS-01 challenge mechanism: TXT record _acme-challenge.example.test in zone example.test (by the webhook solver rfc2136.acme.dns-solver.test)',
    ]);
    await waitFor(
      'the challenge gone, its TXT record removed by the solver (CleanUp)',
      async () => !(await admin.list(Challenge.kind, { namespace })).items.length && !(await txt('_acme-challenge.example.test')).length,
      { timeoutMs: 30_000 },
    );
    // Added once and removed once, by the solver: BIND saw exactly two signed updates.
    expect(bind.updates() - updatesBefore).toBe(2);

    // A solver the API server does not serve, and one that fails (a TSIG key BIND refuses): each
    // named on its Challenge with what the API server or the solver said.
    await issuer(namespace, 'nosuch', webhook('tsig', 'acme.nowhere.test'));
    await apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'wrong', namespace }, stringData: { secret: Buffer.alloc(32, 9).toString('base64') } });
    await issuer(namespace, 'badkey', webhook('wrong'));
    // Names of their own: challenges for one name go one at a time, across namespaces.
    for (const [name, iss] of [
      ['hook-lost', 'nosuch'],
      ['hook-refused', 'badkey'],
    ])
      await apply({
        apiVersion: 'cert.opkit.dev/v1',
        kind: 'Certificate',
        metadata: { name, namespace },
        spec: { secretName: `${name}-tls`, issuerRef: { name: iss }, dnsNames: [`${name}.example.test`] },
      });
    const reasons = await waitFor(
      'both failures on their Challenges',
      async () => {
        const byName = Object.fromEntries((await admin.list(Challenge.kind, { namespace })).items.map((c) => [c.spec.dnsName, c.status?.reason ?? '']));
        const lost = byName['hook-lost.example.test'];
        const refused = byName['hook-refused.example.test'];
        return /not served/.test(lost ?? '') && /could not present/.test(refused ?? '') && { lost, refused };
      },
      { timeoutMs: 60_000 },
    );
    expect(reasons.lost).toMatch(
      /^DNS-01: the DNS webhook solver rfc2136 \(acme\.nowhere\.test\) is not served by the API server \(no APIService v1alpha1\.acme\.nowhere\.test, or no solver of that name\)/,
    );
    expect(reasons.refused).toMatch(
      /^DNS-01: the DNS webhook solver rfc2136 \(acme\.dns-solver\.test\) could not present the TXT record _acme-challenge\.hook-refused\.example\.test: DNS update failed: dns: bad authentication/,
    );

    // An identity the solver's chart did not grant is refused by the API server before the solver
    // sees anything, and told what to grant.
    const nobody = new Client(new Transport((await plane.userCredentials('not-the-operator')).kubeConfig), { fieldManager: 'test' });
    const denied = await callWebhookSolver({ call: (kind, body) => nobody.call(kind, body) }, hook, {
      uid: '',
      action: 'Present',
      type: 'dns-01',
      dnsName: 'x.example.test',
      key: 'k',
      resourceNamespace: namespace,
      resolvedFQDN: '_acme-challenge.x.example.test.',
      resolvedZone: 'example.test.',
      allowAmbientCredentials: false,
    }).catch((e: unknown) => e);
    expect((denied as Error).message).toMatch(
      /^this operator may not call the DNS webhook solver rfc2136 \(acme\.dns-solver\.test\): grant its ServiceAccount create on rfc2136\.acme\.dns-solver\.test .*cannot create resource "rfc2136" in API group "acme\.dns-solver\.test"/,
    );
  }, 240_000);

  it('names what cannot work: a DNS-01 provider this operator lacks (on the Issuer), a TSIG key the server refuses (on the Challenge and the Certificate)', async () => {
    const namespace = await ns();
    const cf = await issuer(namespace, 'cloudflare', { cloudflare: { apiTokenSecretRef: { name: 'cf', key: 'token' } } }, 'False');
    expect(cond(cf, 'Ready')).toMatchObject({
      reason: 'InvalidSolver',
      message:
        'solvers[0].dns01: the cloudflare DNS-01 provider is not supported by this operator (rfc2136 is built in; every other provider through its cert-manager DNS webhook solver)',
    });

    await apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'wrong', namespace }, stringData: { secret: Buffer.alloc(32, 9).toString('base64') } });
    await issuer(namespace, 'badkey', rfc2136('wrong'));
    await apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'Certificate',
      metadata: { name: 'refused', namespace },
      spec: { secretName: 'refused-tls', issuerRef: { name: 'badkey' }, dnsNames: ['refused.example.test'] },
    });
    const ch = await waitFor(
      'the refusal on the Challenge',
      async () => {
        const [c] = (await admin.list(Challenge.kind, { namespace })).items;
        return c?.status?.reason?.includes('NOTAUTH') && c;
      },
      { timeoutMs: 60_000 },
    );
    expect(ch.status?.reason).toMatch(/refused the update of zone example.test: NOTAUTH \(the TSIG key is not accepted for this zone\)/);
    await waitFor(
      'the refusal on the Certificate',
      async () => {
        const c = await admin.get(Certificate.kind, { namespace, name: 'refused' });
        return /NOTAUTH/.test(cond(c, 'Issuing')?.message ?? '') && c;
      },
      { timeoutMs: 60_000 },
    );
  });
});
