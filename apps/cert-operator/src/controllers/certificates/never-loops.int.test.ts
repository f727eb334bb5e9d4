import { Client, CoreEvent, CustomResourceDefinition, Secret, Transport, type Manager } from '@opkit/runtime';
import { testManager } from '@opkit/runtime/testing';
import { createCertificateAuthority, startControlPlane, startFaultProxy, waitFor, type AuditEvent, type ControlPlane, type FaultProxy } from '@opkit/testing';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CertificateObject } from '../../api/v1/certificate.js';
import { defaultConfig } from '../../config.js';
import { CUSTOM_RESOURCES } from '../../manifests/generate.js';
import { createCSR, parseCSR } from '../../pki/csr.js';
import { encodePrivateKey, generatePrivateKey } from '../../pki/keys.js';
import { x509 } from '../../pki/crypto-provider.js';
import { caSign, selfSign } from '../../pki/sign.js';
import { addCertificateControllers } from '../index.js';
import { CERT_APIS } from '../../api/index.js';

const { A, Certificate, CertificateRequest, Issuer } = CERT_APIS.opkit;

/**
 * "Never loops": each thing that writes what the cert operator writes (the Secret's pair, its
 * annotations, the issuer, a second Certificate) keeps writing for a while, and the operator's own
 * writes about the Certificate are counted from the API server's audit log, against bounds stated
 * here. A loop is an unbounded count; every bound below is a small constant, independent of how
 * long or how often the other writer writes.
 */
const OPERATOR = 'cert-operator';
const SYSTEM = 'opkit-system';
/** How long each other writer keeps at it, and how often. */
const ATTACK_MS = 15_000;
const EVERY_MS = 1_000;

describe('never loops: other writers of what the cert operator writes, against a real API server', () => {
  let plane: ControlPlane;
  let admin: Client;
  let manager: Manager;
  let n = 0;
  const apply = (obj: object) => plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify(obj) });
  const ns = async () => {
    const name = `loops${++n}`;
    await plane.kubectl(['create', 'namespace', name]);
    return name;
  };
  const cert = (namespace: string, name: string, spec: Partial<CertificateObject['spec']> = {}) =>
    apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'Certificate',
      metadata: { name, namespace },
      spec: { secretName: name, issuerRef: { name: 'ca' }, dnsNames: [`${name}.example.com`], privateKey: { algorithm: 'ECDSA' }, ...spec },
    });
  const getCert = (namespace: string, name: string) => admin.get(Certificate.kind, { namespace, name });
  const ready = (c: Pick<CertificateObject, 'status'>) => c.status?.conditions?.find((x) => x.type === 'Ready');
  const waitReady = (namespace: string, name: string, revision = 1) =>
    waitFor(`Certificate ${name} Ready at revision ${revision}`, async () => {
      const c = await getCert(namespace, name);
      return ready(c)?.status === 'True' && (c.status?.revision ?? 0) >= revision && c;
    });
  const events = async (namespace: string, name: string) => (await admin.list(CoreEvent, { namespace, fieldSelector: `involvedObject.name=${name}` })).items;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  /** Another tool, writing with a field manager of its own. */
  const writer = (fieldManager: string) => new Client(new Transport(plane.kubeConfig), { fieldManager });

  const b64 = (s: string) => Buffer.from(s).toString('base64');
  /** A valid self-signed pair for `host`, as another tool would write it: Secret data. */
  async function foreignPair(host: string): Promise<Record<string, string>> {
    const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 256, encoding: 'PKCS1' });
    const csr = await parseCSR(await createCSR({ secretName: host, issuerRef: { name: 'x' }, dnsNames: [host] }, key));
    const { certificate } = await selfSign({ csr, durationMs: 30 * 86_400_000, isCA: false, usages: ['digital signature'] }, key);
    return { 'tls.crt': b64(certificate), 'tls.key': b64(encodePrivateKey(key, 'PKCS1')) };
  }

  /** Runs `write` every EVERY_MS for ATTACK_MS; returns how many times it wrote. */
  async function keepWriting(write: (i: number) => Promise<unknown>): Promise<number> {
    const until = Date.now() + ATTACK_MS;
    let i = 0;
    while (Date.now() < until) {
      await write(i++);
      await sleep(EVERY_MS);
    }
    return i;
  }

  /** What the operator wrote about one Certificate since `since`: requests created, status writes, Secret writes. */
  function operatorWrites(namespace: string, name: string, since: Date) {
    const mine = plane.audit!.writes({ since }).filter((e) => e.userAgent?.startsWith(`${OPERATOR}/`) && e.objectRef?.namespace === namespace);
    const is = (e: AuditEvent, resource: string, objectName?: string, subresource?: string) =>
      e.objectRef?.resource === resource && (objectName === undefined || e.objectRef.name === objectName) && e.objectRef.subresource === subresource;
    return {
      requests: mine.filter((e) => e.verb === 'create' && is(e, 'certificaterequests')).length,
      statusWrites: mine.filter((e) => is(e, 'certificates', name, 'status')).length,
      secretWrites: mine.filter((e) => is(e, 'secrets', name)).length,
    };
  }

  /** A namespace with a SelfSigned issuer, a CA Certificate from it, and a CA issuer on that. */
  async function caChain(namespace: string) {
    await apply({ apiVersion: 'cert.opkit.dev/v1', kind: 'Issuer', metadata: { name: 'selfsigned', namespace }, spec: { selfSigned: {} } });
    await cert(namespace, 'root-ca', { isCA: true, commonName: 'loops root', dnsNames: undefined, duration: '8760h', issuerRef: { name: 'selfsigned' } });
    await waitReady(namespace, 'root-ca');
    await apply({ apiVersion: 'cert.opkit.dev/v1', kind: 'Issuer', metadata: { name: 'ca', namespace }, spec: { ca: { secretName: 'root-ca' } } });
    await waitFor(
      'the CA issuer to be Ready',
      async () => (await admin.get(Issuer.kind, { namespace, name: 'ca' })).status?.conditions?.[0]?.status === 'True',
    );
  }

  beforeAll(async () => {
    plane = await startControlPlane({ audit: true });
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
    for (const r of CUSTOM_RESOURCES) await admin.create(CustomResourceDefinition, r.crd as never);
    await waitFor('CRDs served', () => admin.list(Certificate.kind).then(() => true));
    await plane.kubectl(['create', 'namespace', SYSTEM]);
    manager = testManager(plane.kubeConfig, { name: OPERATOR }).manager;
    addCertificateControllers(manager, defaultConfig({ clusterResourceNamespace: SYSTEM }));
    await manager.start();
  });
  afterAll(async () => {
    await manager?.stop();
    await plane?.stop();
  });

  // A valid pair from another tool (External Secrets, reflector, a CSI driver, cert-manager) was
  // re-issued over at once, every time: contention engaged only for broken pairs.
  it('a writer that keeps putting its own valid pair into the Secret: one re-issue, then contention named after the writer', async () => {
    const namespace = await ns();
    await caChain(namespace);
    await cert(namespace, 'valid');
    await waitReady(namespace, 'valid');
    const since = new Date();
    const data = await foreignPair('valid.example.com');
    const reflector = writer('reflector');
    const wrote = await keepWriting(() => reflector.patch(Secret, { namespace, name: 'valid' }, { data }));
    console.log(`valid foreign pair written ${wrote} times: ${JSON.stringify(operatorWrites(namespace, 'valid', since))} so far`);
    const c = await waitFor('SecretContention', async () => {
      const x = await getCert(namespace, 'valid');
      return ready(x)?.reason === 'SecretContention' && x;
    });
    expect(ready(c)?.message).toMatch(/keeps being overwritten \(by reflector\): not re-issuing into a fight; retrying at/);
    expect((await events(namespace, 'valid')).some((e) => e.reason === 'SecretOverwritten' && /overwritten by reflector/.test(e.message ?? ''))).toBe(true);
    await sleep(3_000);
    const counted = operatorWrites(namespace, 'valid', since);
    console.log(`valid foreign pair, settled: ${JSON.stringify(counted)}`);
    // Bound: one re-issue (one request), whatever the writer does; a handful of status writes.
    expect(counted.requests).toBe(1);
    expect(counted.statusWrites).toBeLessThanOrEqual(6);
    expect((await getCert(namespace, 'valid')).status?.revision).toBe(2);
  }, 90_000);

  // Another tool edits the Secret's annotations (an issuer name of its own, a certificate name): each
  // edit re-issued, so a tool that keeps resetting annotations made a request per edit.
  it("a writer that keeps changing the Secret's annotations: repaired, never re-issued", async () => {
    const namespace = await ns();
    await caChain(namespace);
    await cert(namespace, 'annotated');
    const before = await waitReady(namespace, 'annotated');
    const since = new Date();
    const argo = writer('argocd');
    const wrote = await keepWriting((i) =>
      argo.patch(
        Secret,
        { namespace, name: 'annotated' },
        { metadata: { annotations: i % 2 ? { [A.issuerName]: `other-${i}` } : { [A.certificateName]: `other-${i}` } } },
      ),
    );
    const repaired = await waitFor('annotations repaired', async () => {
      const x = await admin.get(Secret, { namespace, name: 'annotated' });
      return x.metadata.annotations?.[A.issuerName] === 'ca' && x.metadata.annotations[A.certificateName] === 'annotated' && x;
    });
    await sleep(3_000);
    const counted = operatorWrites(namespace, 'annotated', since);
    console.log(`annotations edited ${wrote} times: ${JSON.stringify(counted)}`);
    // Bound: no request; at most one repair of the Secret per edit; the status untouched.
    expect(counted.requests).toBe(0);
    expect(counted.secretWrites).toBeLessThanOrEqual(wrote);
    expect(counted.statusWrites).toBe(0);
    expect(repaired.data?.['tls.crt']).toBeDefined();
    const after = await getCert(namespace, 'annotated');
    expect(after.status?.revision).toBe(before.status?.revision);
    expect(ready(after)?.status).toBe('True');
  }, 90_000);

  // The issuer flaps between Ready and not (its CA Secret named, unnamed): the Certificates it
  // signed stay Ready, say the issuer's trouble in IssuerReady, and ask it for nothing.
  it('an issuer flapping Ready: no request, Ready stays True, at most two status writes per flap', async () => {
    const namespace = await ns();
    await caChain(namespace);
    await cert(namespace, 'steady');
    const before = await waitReady(namespace, 'steady');
    const since = new Date();
    const flux = writer('flux');
    const flaps = await keepWriting((i) =>
      flux.patch(Issuer.kind, { namespace, name: 'ca' }, { spec: { ca: { secretName: i % 2 ? 'root-ca' : 'missing-ca' } } } as never),
    );
    await flux.patch(Issuer.kind, { namespace, name: 'ca' }, { spec: { ca: { secretName: 'root-ca' } } } as never);
    await waitFor('IssuerReady gone again', async () => !(await getCert(namespace, 'steady')).status?.conditions?.some((x) => x.type === 'IssuerReady'));
    await sleep(3_000);
    const counted = operatorWrites(namespace, 'steady', since);
    console.log(`issuer flapped ${flaps} times: ${JSON.stringify(counted)}`);
    expect(counted.requests).toBe(0);
    expect(counted.secretWrites).toBe(0);
    expect(counted.statusWrites).toBeLessThanOrEqual(2 * (flaps + 1));
    const after = await getCert(namespace, 'steady');
    expect(ready(after)?.status).toBe('True');
    expect(after.status?.revision).toBe(before.status?.revision);
  }, 90_000);

  // A second Certificate names a Secret another one holds, and is edited again and again: refused
  // each time with a reason, the holder untouched.
  it('a second Certificate on the same Secret, edited again and again: refused, the holder never re-issued', async () => {
    const namespace = await ns();
    await caChain(namespace);
    await cert(namespace, 'holder');
    const before = await waitReady(namespace, 'holder');
    const since = new Date();
    const edits = await keepWriting((i) => cert(namespace, 'intruder', { secretName: 'holder', dnsNames: [`intruder-${i}.example.com`] }));
    const refused = await waitFor('the intruder refused', async () => {
      const x = await getCert(namespace, 'intruder');
      return ready(x)?.reason === 'DuplicateSecretName' && x;
    });
    expect(ready(refused)?.message).toMatch(/Secret "holder" is already used by Certificate "holder", which holds it/);
    await sleep(3_000);
    const holder = operatorWrites(namespace, 'holder', since);
    const intruder = operatorWrites(namespace, 'intruder', since);
    console.log(`second Certificate edited ${edits} times: holder ${JSON.stringify(holder)}, intruder ${JSON.stringify(intruder)}`);
    expect(holder).toEqual({ requests: 0, statusWrites: 0, secretWrites: 0 });
    // The intruder's status is written when its message would change (never, here) or its generation does.
    expect(intruder.requests).toBe(0);
    expect(intruder.statusWrites).toBeLessThanOrEqual(edits + 1);
    expect((await getCert(namespace, 'holder')).status?.revision).toBe(before.status?.revision);
  }, 90_000);

  // Someone rotates the keystore password again and again: each change rebuilds the keystores
  // once (one Secret write), and nothing is issued.
  it('a keystore password changed again and again: one Secret write per change, no request', async () => {
    const namespace = await ns();
    await caChain(namespace);
    await admin.create(Secret, { metadata: { name: 'store-pass', namespace }, stringData: { password: 'pass-0' } });
    await cert(namespace, 'java', {
      keystores: { pkcs12: { create: true, passwordSecretRef: { name: 'store-pass', key: 'password' }, profile: 'Modern2023' } },
    });
    const before = await waitReady(namespace, 'java');
    const since = new Date();
    const vault = writer('vault-secrets-operator');
    const changes = await keepWriting((i) => vault.patch(Secret, { namespace, name: 'store-pass' }, { data: { password: b64(`pass-${i + 1}`) } }));
    await sleep(3_000);
    const counted = operatorWrites(namespace, 'java', since);
    console.log(`keystore password changed ${changes} times: ${JSON.stringify(counted)}`);
    expect(counted.requests).toBe(0);
    expect(counted.secretWrites).toBeGreaterThanOrEqual(1);
    expect(counted.secretWrites).toBeLessThanOrEqual(changes);
    expect(counted.statusWrites).toBe(0);
    expect((await getCert(namespace, 'java')).status?.revision).toBe(before.status?.revision);
  }, 90_000);

  // With cert-manager beside this operator (a migration), a cert-manager Certificate and one of
  // ours naming the same Secret re-issued over each other. Ours now stands back, unless told.
  it('a cert-manager Certificate holding the Secret: refused with the reason and nothing issued, until a takeover is asked', async () => {
    const namespace = await ns();
    await caChain(namespace);
    // cert-manager's Certificate kind (only what this test needs of its CRD) and one of them.
    await apply({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'certificates.cert-manager.io' },
      spec: {
        group: 'cert-manager.io',
        names: { kind: 'Certificate', plural: 'certificates', singular: 'certificate', listKind: 'CertificateList' },
        scope: 'Namespaced',
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    }).catch(() => undefined); // already there from an earlier run of this test in the same plane
    await waitFor('cert-manager Certificates served', () => plane.kubectl(['get', 'certificates.cert-manager.io', '-A']).then(() => true));
    await apply({ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'web', namespace }, spec: { secretName: 'web-tls' } });
    // What cert-manager wrote: its pair and its annotations.
    await admin.create(Secret, {
      metadata: { name: 'web-tls', namespace, annotations: { 'cert-manager.io/certificate-name': 'web', 'cert-manager.io/issuer-name': 'letsencrypt' } },
      type: 'kubernetes.io/tls',
      data: await foreignPair('web.example.com'),
    });
    const since = new Date();
    await cert(namespace, 'ours', { secretName: 'web-tls', dnsNames: ['web.example.com'] });
    const refused = await waitFor('refused', async () => {
      const x = await getCert(namespace, 'ours');
      return ready(x)?.reason === 'SecretOwnedByCertManager' && x;
    });
    expect(ready(refused)?.message).toMatch(/Secret "web-tls" is held by cert-manager's Certificate "web" \(cert-manager.io\/v1\): not issuing into it/);
    await sleep(3_000);
    const counted = operatorWrites(namespace, 'ours', since);
    console.log(`beside a cert-manager Certificate: ${JSON.stringify(counted)}`);
    expect(counted.requests).toBe(0);
    expect(counted.secretWrites).toBe(0);
    expect(counted.statusWrites).toBeLessThanOrEqual(1);
    // Asked to take over: issued into the Secret.
    await plane.kubectl(['annotate', 'certificate.cert.opkit.dev', 'ours', '-n', namespace, 'cert.opkit.dev/take-over-from-cert-manager=true']);
    await waitReady(namespace, 'ours');
    expect((await admin.get(Secret, { namespace, name: 'web-tls' })).metadata.annotations?.['cert.opkit.dev/certificate-name']).toBe('ours');
  }, 90_000);
});

/**
 * A CA that returns something other than what was asked: another subject and extensions of its
 * own (Let's Encrypt adds a common name; private CAs rewrite the subject, add CRL and OCSP
 * locations). Comparing the spec with the issued certificate re-issued until the CA's limits
 * stopped it; the spec is compared with the request. Here the test is the CA: approval is off,
 * and it signs each request itself, rewritten.
 */
describe('never loops: a CA that rewrites the subject and adds extensions', () => {
  let plane: ControlPlane;
  let admin: Client;
  let manager: Manager | undefined;
  const NS = 'rewriting';

  beforeAll(async () => {
    ({ plane, admin } = await auditedPlane(NS));
    manager = testManager(plane.kubeConfig, { name: OPERATOR }).manager;
    addCertificateControllers(manager, { ...defaultConfig({ clusterResourceNamespace: SYSTEM }), autoApprove: false });
    await manager.start();
  });
  afterAll(async () => {
    await manager?.stop();
    await plane?.stop();
  });

  it('issues once and keeps what the CA returned: one request, one Secret write, while the Certificate is touched every second', async () => {
    const ca = await createCertificateAuthority('rewriting CA', 30);
    await admin.create(Secret, {
      metadata: { name: 'ca', namespace: NS },
      type: 'kubernetes.io/tls',
      stringData: { 'tls.crt': ca.cert, 'tls.key': ca.key },
    } as never);
    const apply = (obj: object) => plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify(obj) });
    await apply({ apiVersion: 'cert.opkit.dev/v1', kind: 'Issuer', metadata: { name: 'ca', namespace: NS }, spec: { ca: { secretName: 'ca' } } });
    const since = new Date();
    await apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'Certificate',
      metadata: { name: 'app', namespace: NS },
      spec: {
        secretName: 'app',
        issuerRef: { name: 'ca' },
        commonName: 'app.example.com',
        dnsNames: ['app.example.com'],
        subject: { organizations: ['Asked'] },
      },
    });
    // The request, once the operator has said it waits for approval.
    const pending = await waitFor('the request, pending approval', async () => {
      const [cr] = (await admin.list(CertificateRequest.kind, { namespace: NS })).items;
      return cr?.status?.conditions?.some((c) => c.reason === 'Pending') && cr;
    });
    const csr = await parseCSR(Buffer.from(pending.spec.request, 'base64').toString());
    const issued = await caSign(
      {
        csr: { ...csr, subjectDer: Buffer.from(new x509.Name('CN=app.example.com, O=Rewritten by the CA, C=DE').toArrayBuffer()) },
        durationMs: 30 * 86_400_000,
        isCA: false,
        usages: ['digital signature', 'key encipherment'],
        crlDistributionPoints: ['http://crl.example.com/ca.crl'],
        ocspServers: ['http://ocsp.example.com'],
      },
      { chainPem: ca.cert, key: createPrivateKey(ca.key) },
    );
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    await admin.patchStatus(
      CertificateRequest.kind,
      { namespace: NS, name: pending.metadata.name! },
      {
        status: {
          conditions: [
            { type: 'Approved', status: 'True', reason: 'test', message: 'approved by the test', lastTransitionTime: now },
            { type: 'Ready', status: 'True', reason: 'Issued', message: 'signed by the rewriting CA', lastTransitionTime: now },
          ],
          certificate: Buffer.from(issued.certificate).toString('base64'),
          ca: Buffer.from(issued.ca).toString('base64'),
        },
      },
    );
    const c = await waitFor('Certificate Ready', async () => {
      const x = await admin.get(Certificate.kind, { namespace: NS, name: 'app' });
      return x.status?.conditions?.some((k) => k.type === 'Ready' && k.status === 'True') && x;
    });
    expect(c.status?.revision).toBe(1);
    const leaf = new X509Certificate(Buffer.from((await admin.get(Secret, { namespace: NS, name: 'app' })).data!['tls.crt']!, 'base64'));
    expect(leaf.subject.split('\n')).toEqual(['CN=app.example.com', 'O=Rewritten by the CA', 'C=DE']);
    expect(leaf.infoAccess).toMatch(/OCSP - URI:http:\/\/ocsp.example.com/);

    // The Certificate examined again and again (a label touched each second): nothing issued.
    const touched = await keepTouching(plane, NS, 'app');
    const mine = plane.audit!.writes({ since }).filter((e) => e.userAgent?.startsWith(`${OPERATOR}/`) && e.objectRef?.namespace === NS);
    const counted = {
      requests: mine.filter((e) => e.verb === 'create' && e.objectRef?.resource === 'certificaterequests').length,
      secretWrites: mine.filter((e) => e.objectRef?.resource === 'secrets' && e.objectRef.name === 'app').length,
      statusWrites: mine.filter((e) => e.objectRef?.resource === 'certificates' && e.objectRef.subresource === 'status').length,
    };
    console.log(`a rewriting CA, the Certificate touched ${touched} times: ${JSON.stringify(counted)}`);
    expect(counted.requests).toBe(1);
    expect(counted.secretWrites).toBe(1);
    // Issuing, the request's progress, issued and Ready (3 measured), never one per touch.
    expect(counted.statusWrites).toBeLessThanOrEqual(4);
    expect((await admin.get(Certificate.kind, { namespace: NS, name: 'app' })).status?.revision).toBe(1);
  }, 90_000);
});

/**
 * A cache that lags the operator's own writes (a busy API server's watch). A reconcile that
 * repaired the Secret read it back from the cache, saw the damage it had just repaired, and
 * re-issued in the same reconcile (a CI run caught the new revision, its Secret deleted by the
 * test). Here every watch event of every kind arrives 2 s late, every time.
 */
describe('never loops: a cache that lags every write', () => {
  const NS = 'lagging';
  const LAG_MS = 2_000;
  let plane: ControlPlane;
  let admin: Client;
  let proxy: FaultProxy | undefined;
  let manager: Manager | undefined;
  const apply = (obj: object) => plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify(obj) });
  const getCert = (name: string) => admin.get(Certificate.kind, { namespace: NS, name });
  const getSecret = (name: string) => admin.get(Secret, { namespace: NS, name });
  const waitReady = (name: string, revision = 1) =>
    waitFor(`Certificate ${name} Ready at revision ${revision}`, async () => {
      const c = await getCert(name);
      return c.status?.conditions?.some((k) => k.type === 'Ready' && k.status === 'True') && (c.status?.revision ?? 0) >= revision && c;
    });
  /** The operator's writes since `since`: requests created, Secret writes. */
  const counted = (since: Date) => {
    const mine = plane.audit!.writes({ since }).filter((e) => e.userAgent?.startsWith(`${OPERATOR}/`) && e.objectRef?.namespace === NS);
    return {
      requests: mine.filter((e) => e.verb === 'create' && e.objectRef?.resource === 'certificaterequests').length,
      secretWrites: mine.filter((e) => e.objectRef?.resource === 'secrets' && e.objectRef.name === 'app').length,
    };
  };
  /** Long enough for the cache to show everything, and for a repeated write to have been made. */
  const settle = () => new Promise((r) => setTimeout(r, 3 * LAG_MS));

  beforeAll(async () => {
    ({ plane, admin } = await auditedPlane(NS));
    proxy = await startFaultProxy({ upstream: plane.kubeConfig, seed: 1, active: false, watchLag: { path: /./, ms: LAG_MS } });
    manager = testManager(proxy.kubeConfig(), { name: OPERATOR }).manager;
    addCertificateControllers(manager, defaultConfig({ clusterResourceNamespace: SYSTEM }));
    await manager.start();
    // A CA issuer, for every test here.
    const ca = await createCertificateAuthority('lagging CA', 30);
    await admin.create(Secret, {
      metadata: { name: 'ca', namespace: NS },
      type: 'kubernetes.io/tls',
      stringData: { 'tls.crt': ca.cert, 'tls.key': ca.key },
    } as never);
    await apply({ apiVersion: 'cert.opkit.dev/v1', kind: 'Issuer', metadata: { name: 'ca', namespace: NS }, spec: { ca: { secretName: 'ca' } } });
  });
  afterAll(async () => {
    await manager?.stop();
    await proxy?.stop();
    await plane?.stop();
  });

  it('issues once; a lost certificate is restored without a re-issue; a deleted Secret is re-issued once', async () => {
    let since = new Date();
    await apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'Certificate',
      metadata: { name: 'app', namespace: NS },
      spec: { secretName: 'app', issuerRef: { name: 'ca' }, dnsNames: ['app.example.com'], privateKey: { algorithm: 'ECDSA' } },
    });
    await waitReady('app');
    await settle();
    expect(counted(since)).toEqual({ requests: 1, secretWrites: 1 });
    const issued = (await getSecret('app')).data!['tls.crt'];

    // Only the certificate lost: restored from the request, one Secret write, no request.
    since = new Date();
    await admin.patch(Secret, { namespace: NS, name: 'app' }, { data: { 'tls.crt': Buffer.from('garbage').toString('base64') } });
    await waitFor('tls.crt restored', async () => (await getSecret('app')).data?.['tls.crt'] === issued);
    await settle();
    expect(counted(since)).toEqual({ requests: 0, secretWrites: 1 });
    const c = await getCert('app');
    expect(c.status?.revision).toBe(1);
    expect(c.status?.conditions?.find((k) => k.type === 'Issuing')).toBeUndefined();
    expect((await getSecret('app')).data?.['tls.crt']).toBe(issued);

    // The Secret deleted: one request, one Secret written, revision 2, and the Secret there.
    since = new Date();
    await admin.delete(Secret, { namespace: NS, name: 'app' });
    await waitReady('app', 2);
    expect((await getSecret('app')).data?.['tls.crt']).not.toBe(issued);
    await settle();
    expect(counted(since)).toEqual({ requests: 1, secretWrites: 1 });
    expect((await getCert('app')).status?.revision).toBe(2);
  }, 120_000);

  // ingress-shim put back a Certificate whose secretName had been edited by hand, then listed the
  // cache (still showing the edit) for Certificates the Ingress no longer names, and deleted it.
  it('an ingress-shim Certificate whose Secret is renamed by hand: put back, the same object, never deleted', async () => {
    await apply({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'shop', namespace: NS, annotations: { 'cert-manager.io/issuer': 'ca' } },
      spec: {
        tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }],
        rules: [
          { host: 'shop.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'shop', port: { number: 80 } } } }] } },
        ],
      },
    });
    const made = await waitReady('shop-tls');
    await plane.kubectl(['patch', 'certificate.cert.opkit.dev', 'shop-tls', '-n', NS, '--type=merge', '-p', '{"spec":{"secretName":"elsewhere"}}']);
    await waitFor(
      'the secretName put back',
      async () => (await admin.find(Certificate.kind, { namespace: NS, name: 'shop-tls' }))?.spec.secretName === 'shop-tls',
    );
    await settle();
    expect((await getCert('shop-tls')).metadata.uid).toBe(made.metadata.uid);
    const deletes = plane
      .audit!.writes({ since: new Date(Date.parse(made.metadata.creationTimestamp!)) })
      .filter((e) => e.userAgent?.startsWith(`${OPERATOR}/`) && e.verb === 'delete' && e.objectRef?.resource === 'certificates');
    expect(deletes).toEqual([]);
  }, 120_000);
});

/** A control plane with an audit log, the cert operator's CRDs served, and its namespaces. */
async function auditedPlane(...namespaces: string[]): Promise<{ plane: ControlPlane; admin: Client }> {
  const plane = await startControlPlane({ audit: true });
  const admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
  for (const r of CUSTOM_RESOURCES) await admin.create(CustomResourceDefinition, r.crd as never);
  await waitFor('CRDs served', () => admin.list(Certificate.kind).then(() => true));
  for (const name of [SYSTEM, ...namespaces]) await plane.kubectl(['create', 'namespace', name]);
  return { plane, admin };
}

/** Touches a Certificate's labels every EVERY_MS for ATTACK_MS, as a GitOps tool re-applying it would; returns how many times. */
async function keepTouching(plane: ControlPlane, namespace: string, name: string): Promise<number> {
  const until = Date.now() + ATTACK_MS;
  let i = 0;
  while (Date.now() < until) {
    await plane.kubectl(['label', '--overwrite', 'certificate.cert.opkit.dev', name, '-n', namespace, `touched=${i++}`]);
    await new Promise((r) => setTimeout(r, EVERY_MS));
  }
  return i;
}
