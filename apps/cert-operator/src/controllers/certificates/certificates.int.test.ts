import { Client, CoreEvent, CustomResourceDefinition, Secret, Transport, type Manager } from '@opkit/runtime';
import { metricValue, scrape, testManager } from '@opkit/runtime/testing';
import { startControlPlane, waitFor, type ControlPlane } from '@opkit/testing';
import { execFileSync } from 'node:child_process';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CertificateObject } from '../../api/v1/certificate.js';
import { defaultConfig } from '../../config.js';
import { CUSTOM_RESOURCES } from '../../manifests/generate.js';
import { METADATA } from '../../secrets/secret-reader.js';
import { addCertificateControllers } from '../index.js';
import { CERT_APIS } from '../../api/index.js';

const { A, Certificate, CertificateRequest, Issuer, L } = CERT_APIS.opkit;

const OPERATOR = 'cert-operator';
const SYSTEM = 'opkit-system';
const pem = (s: { data?: Record<string, string> }, k: string) => Buffer.from(s.data?.[k] ?? '', 'base64').toString();

describe('certificates with SelfSigned and CA issuers, against a real API server', () => {
  let plane: ControlPlane;
  let admin: Client;
  let manager: Manager;
  let n = 0;
  const apply = (obj: object) => plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify(obj) });
  const ns = async () => {
    const name = `certs${++n}`;
    await plane.kubectl(['create', 'namespace', name]);
    return name;
  };
  const cert = (namespace: string, name: string, spec: Partial<CertificateObject['spec']>) =>
    apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'Certificate',
      metadata: { name, namespace },
      spec: { secretName: name, issuerRef: { name: 'ca' }, ...spec },
    });
  const getCert = (namespace: string, name: string) => admin.get(Certificate.kind, { namespace, name });
  const ready = (c: Pick<CertificateObject, 'status'>) => c.status?.conditions?.find((x) => x.type === 'Ready');
  const waitReady = (namespace: string, name: string, revision = 1) =>
    waitFor(
      `Certificate ${name} Ready at revision ${revision}`,
      async () => {
        const c = await getCert(namespace, name);
        return ready(c)?.status === 'True' && (c.status?.revision ?? 0) >= revision && c;
      },
      { timeoutMs: 30_000 },
    );
  const secret = (namespace: string, name: string) => admin.get(Secret, { namespace, name });
  const events = async (namespace: string, name: string) => (await admin.list(CoreEvent, { namespace, fieldSelector: `involvedObject.name=${name}` })).items;

  /** A namespace with a SelfSigned issuer, a CA Certificate from it, and a CA issuer on that. */
  async function caChain(namespace: string) {
    await apply({ apiVersion: 'cert.opkit.dev/v1', kind: 'Issuer', metadata: { name: 'selfsigned', namespace }, spec: { selfSigned: {} } });
    await cert(namespace, 'root-ca', {
      isCA: true,
      commonName: 'opkit test root',
      secretName: 'root-ca',
      duration: '8760h',
      issuerRef: { name: 'selfsigned' },
      privateKey: { algorithm: 'ECDSA', size: 384 },
    });
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
    const t = testManager(plane.kubeConfig, { name: OPERATOR });
    manager = t.manager;
    addCertificateControllers(manager, defaultConfig({ clusterResourceNamespace: SYSTEM }));
    await manager.start();
  });
  afterAll(async () => {
    await manager?.stop();
    await plane?.stop();
  });

  it('issues SelfSigned → CA → leaf; the leaf chains to the CA, with the SANs, usages and key the spec asks for', async () => {
    const namespace = await ns();
    await caChain(namespace);
    const root = await secret(namespace, 'root-ca');
    const rootCert = new X509Certificate(pem(root, 'tls.crt'));
    expect(rootCert.ca).toBe(true);
    expect(pem(root, 'ca.crt')).toBe(pem(root, 'tls.crt'));
    expect(createPrivateKey(pem(root, 'tls.key')).asymmetricKeyDetails).toMatchObject({ namedCurve: 'secp384r1' });

    await cert(namespace, 'web', {
      dnsNames: ['web.example.com', 'www.example.com'],
      commonName: 'web.example.com',
      usages: ['server auth', 'digital signature', 'key encipherment'],
      privateKey: { algorithm: 'RSA', size: 3072, encoding: 'PKCS8' },
      subject: { organizations: ['opkit'] },
    });
    const c = await waitReady(namespace, 'web');
    const s = await secret(namespace, 'web');
    expect(s.type).toBe('kubernetes.io/tls');
    const leaf = new X509Certificate(pem(s, 'tls.crt'));
    expect(leaf.verify(rootCert.publicKey)).toBe(true);
    expect(leaf.checkIssued(rootCert)).toBe(true);
    expect(pem(s, 'ca.crt').trim()).toBe(rootCert.toString().trim());
    expect(leaf.subjectAltName).toBe('DNS:web.example.com, DNS:www.example.com');
    expect(leaf.subject).toBe('O=opkit\nCN=web.example.com');
    expect(leaf.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    expect(leaf.ca).toBe(false);
    expect(pem(s, 'tls.key')).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(createPrivateKey(pem(s, 'tls.key')).asymmetricKeyDetails?.modulusLength).toBe(3072);
    expect(leaf.checkPrivateKey(createPrivateKey(pem(s, 'tls.key')))).toBe(true);
    expect(s.metadata.annotations).toMatchObject({
      [A.certificateName]: 'web',
      [A.issuerName]: 'ca',
      [A.issuerKind]: 'Issuer',
      [A.issuerGroup]: 'cert.opkit.dev',
      [A.commonName]: 'web.example.com',
      [A.altNames]: 'web.example.com,www.example.com',
      [A.ipSans]: '',
      [A.uriSans]: '',
      [A.subjectOrganizations]: 'opkit',
    });
    // Status as cert-manager's: validity, renewal at 2/3 of the 90-day default lifetime, revision.
    const life = Date.parse(c.status!.notAfter!) - Date.parse(c.status!.notBefore!);
    expect(life).toBe(2160 * 3_600_000);
    expect(Date.parse(c.status!.renewalTime!) - Date.parse(c.status!.notBefore!)).toBe((life * 2) / 3);
    expect(c.status?.revision).toBe(1);
    expect(c.status?.nextPrivateKeySecretName).toBeUndefined();
    const cols = await plane.kubectl(['get', 'cert', 'web', '-n', namespace, '-o', 'wide', '--no-headers']);
    expect(cols.stdout).toMatch(/^web\s+True\s+web\s+ca\s+Certificate is up to date and has not expired/);
    const crs = (await admin.list(CertificateRequest.kind, { namespace })).items.filter((r) => r.metadata.annotations?.[A.certificateName] === 'web');
    expect(
      crs.map((r) =>
        r.status?.conditions
          ?.map((x) => `${x.type}=${x.status}`)
          .sort()
          .join(','),
      ),
    ).toEqual(['Approved=True,Ready=True']);
  });

  it("shows each Certificate and Issuer on /metrics under cert-manager's names: expiry, renewal time, Ready status", async () => {
    const namespace = await ns();
    await caChain(namespace);
    await cert(namespace, 'watched', { dnsNames: ['watched.example.com'] });
    await cert(namespace, 'unissued', { dnsNames: ['unissued.example.com'], issuerRef: { name: 'missing', kind: 'ClusterIssuer' } });
    const c = await waitReady(namespace, 'watched');
    const leaf = new X509Certificate(pem(await secret(namespace, 'watched'), 'tls.crt'));
    const labels = { name: 'watched', namespace, issuer_name: 'ca', issuer_kind: 'Issuer', issuer_group: 'cert.opkit.dev' };
    const metrics = await waitFor('the unissued Certificate reported not Ready', async () => {
      const body = (await scrape(manager, '/metrics')).body;
      return metricValue(body, 'certmanager_certificate_ready_status', { name: 'unissued', namespace, condition: 'False' }) === 1 && body;
    });
    expect(metricValue(metrics, 'certmanager_certificate_expiration_timestamp_seconds', labels)).toBe(Date.parse(leaf.validTo) / 1000);
    expect(metricValue(metrics, 'certmanager_certificate_not_after_timestamp_seconds', labels)).toBe(Date.parse(leaf.validTo) / 1000);
    expect(metricValue(metrics, 'certmanager_certificate_not_before_timestamp_seconds', labels)).toBe(Date.parse(leaf.validFrom) / 1000);
    expect(metricValue(metrics, 'certmanager_certificate_renewal_timestamp_seconds', labels)).toBe(Date.parse(c.status!.renewalTime!) / 1000);
    expect(['True', 'False', 'Unknown'].map((condition) => metricValue(metrics, 'certmanager_certificate_ready_status', { ...labels, condition }))).toEqual([
      1, 0, 0,
    ]);
    // The issuers too (cert-manager's certmanager_issuer_ready_status).
    expect(metricValue(metrics, 'certmanager_issuer_ready_status', { name: 'ca', namespace, condition: 'True' })).toBe(1);
    expect(metricValue(metrics, 'certmanager_issuer_ready_status', { name: 'ca', namespace, condition: 'False' })).toBe(0);
    const unissued = { name: 'unissued', namespace, issuer_name: 'missing', issuer_kind: 'ClusterIssuer' };
    expect(metricValue(metrics, 'certmanager_certificate_expiration_timestamp_seconds', unissued)).toBe(0);
    await admin.delete(Certificate.kind, { namespace, name: 'unissued' });
    await waitFor('the deleted Certificate gone from /metrics', async () => !(await scrape(manager, '/metrics')).body.includes('name="unissued"'));
  });

  it('renews at the renewal time with a new key (rotationPolicy Always), or the same key (Never)', async () => {
    const namespace = await ns();
    await caChain(namespace);
    // 1 h lifetime, renew 59m50s before expiry: the renewal falls due 10 s after issuance.
    await cert(namespace, 'short', {
      dnsNames: ['short.example.com'],
      duration: '1h',
      renewBefore: '59m50s',
      privateKey: { algorithm: 'ECDSA', rotationPolicy: 'Always' },
    });
    await cert(namespace, 'kept', {
      dnsNames: ['kept.example.com'],
      duration: '1h',
      renewBefore: '59m50s',
      privateKey: { algorithm: 'ECDSA', rotationPolicy: 'Never' },
    });
    const first = await waitReady(namespace, 'short');
    await waitReady(namespace, 'kept');
    const [keyA, keptA] = [pem(await secret(namespace, 'short'), 'tls.key'), pem(await secret(namespace, 'kept'), 'tls.key')];
    const due = Date.parse(first.status!.renewalTime!);
    const renewed = await waitReady(namespace, 'short', 2);
    const renewedAt = Date.parse(renewed.status!.notBefore!);
    console.log(`renewal due ${first.status!.renewalTime}, new certificate notBefore ${renewed.status!.notBefore}`);
    expect(renewedAt).toBeGreaterThanOrEqual(due);
    expect(renewedAt - due).toBeLessThan(10_000);
    expect(pem(await secret(namespace, 'short'), 'tls.key')).not.toBe(keyA);
    await waitReady(namespace, 'kept', 2);
    expect(pem(await secret(namespace, 'kept'), 'tls.key')).toBe(keptA);
    // Only revisionHistoryLimit (1) CertificateRequests remain.
    const left = (await admin.list(CertificateRequest.kind, { namespace })).items.filter((r) => r.metadata.annotations?.[A.certificateName] === 'short');
    expect(left.map((r) => r.metadata.name)).toEqual(['short-2']);
  });

  it('re-issues a deleted Secret, and repairs an edited one without re-issuing', async () => {
    const namespace = await ns();
    await caChain(namespace);
    await cert(namespace, 'app', { dnsNames: ['app.example.com'], secretTemplate: { labels: { team: 'web' }, annotations: { owner: 'web-team' } } });
    await waitReady(namespace, 'app');
    const s1 = await secret(namespace, 'app');
    expect(s1.metadata.labels).toMatchObject({ team: 'web', 'controller.cert.opkit.dev/fao': 'true' });
    expect(s1.metadata.annotations?.owner).toBe('web-team');

    // Another tool adds its own metadata and removes ours: ours comes back, theirs stays, no re-issue.
    await plane.kubectl(['label', 'secret', 'app', '-n', namespace, 'argocd.argoproj.io/instance=shop', 'team-']);
    await plane.kubectl(['annotate', 'secret', 'app', '-n', namespace, `${A.altNames}-`]);
    const repaired = await waitFor('metadata repaired', async () => {
      const s = await secret(namespace, 'app');
      return s.metadata.labels?.team === 'web' && s.metadata.annotations?.[A.altNames] === 'app.example.com' && s;
    });
    expect(repaired.metadata.labels?.['argocd.argoproj.io/instance']).toBe('shop');
    expect(pem(repaired, 'tls.crt')).toBe(pem(s1, 'tls.crt'));

    // The certificate is lost but the key kept: restored from the CertificateRequest, no re-issue.
    await admin.patch(Secret, { namespace, name: 'app' }, { data: { 'tls.crt': Buffer.from('garbage').toString('base64') } });
    await waitFor('tls.crt restored', async () => pem(await secret(namespace, 'app'), 'tls.crt') === pem(s1, 'tls.crt'));
    expect((await getCert(namespace, 'app')).status?.revision).toBe(1);
    await waitFor('the SecretRepaired event', async () => (await events(namespace, 'app')).some((e) => e.reason === 'SecretRepaired'));

    await admin.delete(Secret, { namespace, name: 'app' });
    await waitReady(namespace, 'app', 2);
    const s2 = await secret(namespace, 'app');
    expect(pem(s2, 'tls.crt')).not.toBe(pem(s1, 'tls.crt'));
    expect(s2.metadata.labels?.team).toBe('web');
  });

  it('re-issues once when another writer replaces the key, then backs off instead of fighting it', async () => {
    const namespace = await ns();
    await caChain(namespace);
    await cert(namespace, 'contested', { dnsNames: ['contested.example.com'], privateKey: { algorithm: 'ECDSA' } });
    await waitReady(namespace, 'contested');
    const foreignKey = Buffer.from(
      createPrivateKey({
        key: (await import('node:crypto')).generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }),
      }).export({ type: 'pkcs8', format: 'pem' }),
    ).toString('base64');
    const overwrite = () =>
      new Client(new Transport(plane.kubeConfig), { fieldManager: 'external-secrets' }).patch(
        Secret,
        { namespace, name: 'contested' },
        { data: { 'tls.key': foreignKey } },
      );
    await overwrite();
    await waitReady(namespace, 'contested', 2);
    // The other writer strikes again, and keeps striking.
    for (let i = 0; i < 5; i++) {
      await overwrite();
      await new Promise((r) => setTimeout(r, 1_000));
    }
    const c = await waitFor('SecretContention', async () => {
      const x = await getCert(namespace, 'contested');
      return ready(x)?.reason === 'SecretContention' && x;
    });
    expect(ready(c)?.message).toMatch(/keeps being overwritten \(by external-secrets\): not re-issuing into a fight; retrying at/);
    expect(c.status?.revision).toBe(2);
    expect(c.status?.failedIssuanceAttempts).toBe(1);
    await new Promise((r) => setTimeout(r, 3_000));
    expect((await getCert(namespace, 'contested')).status?.revision).toBe(2);
    // A forced renewal overrides the backoff.
    await plane.kubectl(['annotate', 'certificate', 'contested', '-n', namespace, `${A.renew}=now`]);
    const forced = await waitReady(namespace, 'contested', 3);
    expect(forced.metadata.annotations?.[A.renew]).toBeUndefined();
    expect(forced.status?.failedIssuanceAttempts).toBeUndefined();
  });

  // Two Certificates naming one Secret: the older won, even when the Secret was the newer one's, so
  // an older Certificate renamed onto a Secret in use took it over. Who holds the Secret keeps it.
  it('leaves a Secret with the Certificate that holds it when an older one is pointed at it', async () => {
    const namespace = await ns();
    await apply({ apiVersion: 'cert.opkit.dev/v1', kind: 'Issuer', metadata: { name: 'selfsigned', namespace }, spec: { selfSigned: {} } });
    await cert(namespace, 'older', { dnsNames: ['older.example.com'], secretName: 'older-tls', issuerRef: { name: 'selfsigned' } });
    await waitReady(namespace, 'older');
    await new Promise((r) => setTimeout(r, 1_100)); // creation times have whole seconds
    await cert(namespace, 'holder', { dnsNames: ['holder.example.com'], secretName: 'shared-tls', issuerRef: { name: 'selfsigned' } });
    await waitReady(namespace, 'holder');
    await admin.patch(Certificate.kind, { namespace, name: 'older' }, { spec: { secretName: 'shared-tls' } });
    const refused = await waitFor('the older Certificate refused', async () => {
      const x = await getCert(namespace, 'older');
      return ready(x)?.reason === 'DuplicateSecretName' && x;
    });
    expect(ready(refused)?.message).toMatch(/Secret "shared-tls" is already used by Certificate "holder", which holds it/);
    await new Promise((r) => setTimeout(r, 2_000));
    expect(ready(await getCert(namespace, 'holder'))?.status).toBe('True');
    expect((await secret(namespace, 'shared-tls')).metadata.annotations?.[A.certificateName]).toBe('holder');
  });

  // A name over 63 characters was written as a label value, so its CertificateRequest was refused
  // and it never issued. The label holds a hash of such a name.
  it('issues a Certificate whose name is longer than a label value may be, or as long as a name may be, and again on renewal', async () => {
    const namespace = await ns();
    await apply({ apiVersion: 'cert.opkit.dev/v1', kind: 'Issuer', metadata: { name: 'selfsigned', namespace }, spec: { selfSigned: {} } });
    const name = `a-very-long-certificate-name-${'x'.repeat(80)}`;
    await cert(namespace, name, { dnsNames: ['long.example.com'], secretName: 'long-tls', issuerRef: { name: 'selfsigned' } });
    await waitReady(namespace, name);
    await plane.kubectl(['annotate', 'certificate', name, '-n', namespace, `${A.renew}=now`]);
    await waitReady(namespace, name, 2);
    // The longest name an object may have (253): its requests' names (`<name>-<revision>`) would
    // be longer, so they are shortened with a hash, still one per revision.
    const longest = `b${'.y'.repeat(126)}`;
    expect(longest).toHaveLength(253);
    await cert(namespace, longest, { dnsNames: ['longest.example.com'], secretName: 'longest-tls', issuerRef: { name: 'selfsigned' } });
    await waitReady(namespace, longest);
    await plane.kubectl(['annotate', 'certificate', longest, '-n', namespace, `${A.renew}=now`]);
    await waitReady(namespace, longest, 2);
    const names = (await admin.list(CertificateRequest.kind, { namespace })).items
      .filter((r) => r.metadata.annotations?.[A.certificateName] === longest)
      .map((r) => r.metadata.name);
    expect(names.length).toBeGreaterThanOrEqual(1);
    for (const n of names) expect(n).toMatch(/^b(\.y)+-[0-9a-f]{8}-[12]$/);
  });

  // An Issuer that was not Ready flipped every Certificate it had issued to Ready=False, though
  // their certificates were valid and served. Ready is the certificate's; the issuer's trouble is
  // another condition.
  it("keeps a valid certificate Ready while its issuer is not, naming the issuer's trouble in IssuerReady", async () => {
    const namespace = await ns();
    await caChain(namespace);
    await cert(namespace, 'served', { dnsNames: ['served.example.com'], issuerRef: { name: 'ca' } });
    await waitReady(namespace, 'served');
    await admin.patch(Issuer.kind, { namespace, name: 'ca' }, { spec: { ca: { secretName: 'gone' } } });
    const flagged = await waitFor('IssuerReady=False on the Certificate', async () => {
      const x = await getCert(namespace, 'served');
      return x.status?.conditions?.find((c) => c.type === 'IssuerReady')?.status === 'False' && x;
    });
    expect(ready(flagged)).toMatchObject({ status: 'True', reason: 'Ready' });
    expect(flagged.status?.conditions?.find((c) => c.type === 'IssuerReady')?.message).toMatch(/^Issuer "ca" is not ready: .*secret "gone" not found/);
    await admin.patch(Issuer.kind, { namespace, name: 'ca' }, { spec: { ca: { secretName: 'root-ca' } } });
    const cleared = await waitFor('IssuerReady gone', async () => {
      const x = await getCert(namespace, 'served');
      return !x.status?.conditions?.some((c) => c.type === 'IssuerReady') && x;
    });
    expect(ready(cleared)?.status).toBe('True');
    expect(cleared.status?.revision).toBe(1);
  });

  it('reports bad input as conditions and events, and does not hot-loop on it', async () => {
    const namespace = await ns();
    await apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'Issuer',
      metadata: { name: 'no-secret', namespace },
      spec: { ca: { secretName: 'does-not-exist' } },
    });
    await apply({ apiVersion: 'cert.opkit.dev/v1', kind: 'Issuer', metadata: { name: 'selfsigned', namespace }, spec: { selfSigned: {} } });
    await cert(namespace, 'unknown-issuer', { dnsNames: ['a.example.com'], issuerRef: { name: 'nope' } });
    await cert(namespace, 'missing-ca', { dnsNames: ['b.example.com'], issuerRef: { name: 'no-secret' } });
    await cert(namespace, 'too-short', { dnsNames: ['d.example.com'], issuerRef: { name: 'selfsigned' }, duration: '30m' });
    await cert(namespace, 'first', { dnsNames: ['e.example.com'], secretName: 'shared', issuerRef: { name: 'selfsigned' } });
    await new Promise((r) => setTimeout(r, 1_100));
    await cert(namespace, 'second', { dnsNames: ['f.example.com'], secretName: 'shared', issuerRef: { name: 'selfsigned' } });
    const expected: Record<string, [string, RegExp]> = {
      'unknown-issuer': ['IssuerNotFound', /^Issuer "nope" not found in namespace certs\d+$/],
      'missing-ca': ['IssuerNotReady', /Issuer "no-secret" is not ready: Error getting keypair for CA issuer: secret "does-not-exist" not found/],
      'too-short': ['InvalidSpec', /spec.duration 30m is shorter than the minimum of 1h/],
      second: ['DuplicateSecretName', /Secret "shared" is already used by Certificate "first", which (was created first|holds it)/],
    };
    for (const [name, [reason, message]] of Object.entries(expected)) {
      const c = await waitFor(`${name}: ${reason}`, async () => {
        const x = await getCert(namespace, name);
        return ready(x)?.reason === reason && x;
      });
      expect(ready(c)?.message).toMatch(message);
      await waitFor(`the ${reason} warning on ${name}`, async () => (await events(namespace, name)).some((e) => e.reason === reason && e.type === 'Warning'));
    }
    await waitReady(namespace, 'first');
    // For a minute, count what the operator writes about these objects: a settled state, not a loop.
    const since = new Date();
    await new Promise((r) => setTimeout(r, 60_000));
    const writes = plane.audit!.writes({ since }).filter((e) => e.userAgent?.startsWith(`${OPERATOR}/`) && e.objectRef?.namespace === namespace);
    console.log(`writes in 60 s for 5 Certificates with bad input: ${writes.length}`);
    expect(writes.map((w) => `${w.verb} ${w.objectRef?.resource}/${w.objectRef?.name}`)).toEqual([]);
  }, 120_000);

  /** The CertificateRequests a Certificate has had, by name. */
  const requestNames = async (namespace: string, name: string) =>
    (await admin.list(CertificateRequest.kind, { namespace })).items
      .filter((r) => r.metadata.annotations?.[A.certificateName] === name)
      .map((r) => r.metadata.name)
      .sort();

  it('issues once and settles, whatever form the spec is written in: IPv6 in another notation, isCA without cert sign, empty usages', async () => {
    const namespace = await ns();
    await caChain(namespace);
    // The certificate holds 2001:db8::1 as 16 bytes; OpenSSL prints it 2001:DB8:0:0:0:0:0:1.
    await cert(namespace, 'v6', { ipAddresses: ['2001:db8::1'], privateKey: { algorithm: 'ECDSA' } });
    // The request carries the usages as written (cert-manager's way); both sides are compared with
    // the defaults and cert sign filled in, so neither form re-issues.
    await cert(namespace, 'sub-ca', { isCA: true, commonName: 'opkit sub CA', usages: ['digital signature'], privateKey: { algorithm: 'ECDSA' } });
    await cert(namespace, 'no-usages', { dnsNames: ['n.example.com'], usages: [], privateKey: { algorithm: 'ECDSA' } });
    const names = ['v6', 'sub-ca', 'no-usages'];
    for (const name of names) await waitReady(namespace, name);
    // The issuance's last write (its spare key Secret deleted) may trail Ready under load.
    await waitFor('the spare keys deleted', async () => !(await admin.list(Secret, { namespace, labelSelector: `${L.nextPrivateKey}=true` })).items.length);
    const since = new Date();
    await new Promise((r) => setTimeout(r, 8_000));
    for (const name of names) {
      expect((await getCert(namespace, name)).status?.revision, name).toBe(1);
      expect(await requestNames(namespace, name)).toEqual([`${name}-1`]);
    }
    const writes = plane.audit!.writes({ since }).filter((e) => e.userAgent?.startsWith(`${OPERATOR}/`) && e.objectRef?.namespace === namespace);
    expect(writes.map((w) => `${w.verb} ${w.objectRef?.resource}/${w.objectRef?.name}`)).toEqual([]);
  });

  it('issues under a CA issuer in seven writes: its request approved and signed in one status write', async () => {
    const namespace = await ns();
    await caChain(namespace);
    const since = new Date();
    await cert(namespace, 'leaf', { dnsNames: ['leaf.example.com'], privateKey: { algorithm: 'ECDSA' } });
    await waitReady(namespace, 'leaf');
    await waitFor('the spare key deleted', async () => !(await admin.list(Secret, { namespace, labelSelector: `${L.nextPrivateKey}=true` })).items.length);
    await new Promise((r) => setTimeout(r, 2_000));
    const writes = plane
      .audit!.writes({ since })
      .filter((e) => e.userAgent?.startsWith(`${OPERATOR}/`) && e.objectRef?.namespace === namespace && e.objectRef.resource !== 'events')
      .map((w) => `${w.verb} ${w.objectRef!.resource}${w.objectRef!.subresource ? `/${w.objectRef!.subresource}` : ''}`);
    // The Certificate's Issuing status, its spare key made and deleted, the request made and
    // answered, the Secret, the Certificate's Ready status. The operator is the approver here
    // (autoApprove), so approving is not a write of its own.
    expect(writes.filter((w) => w.includes('certificaterequests'))).toEqual(['create certificaterequests', 'update certificaterequests/status']);
    expect(writes.length).toBe(7);
  });

  it('re-issues when any subject field changes, not only the organizations', async () => {
    const namespace = await ns();
    await caChain(namespace);
    const spec = { dnsNames: ['subject.example.com'], subject: { organizations: ['opkit'] }, privateKey: { algorithm: 'ECDSA' as const } };
    await cert(namespace, 'subject', spec);
    await waitReady(namespace, 'subject');
    // Street and postal code too: the x509 library knows no short names for them (a CSR with them used to fail).
    await cert(namespace, 'subject', {
      ...spec,
      subject: {
        organizations: ['opkit'],
        countries: ['DE'],
        organizationalUnits: ['platform'],
        localities: ['Berlin'],
        streetAddresses: ['Unter den Linden 1'],
        postalCodes: ['10117'],
      },
    });
    await waitReady(namespace, 'subject', 2);
    const leaf = new X509Certificate(pem(await secret(namespace, 'subject'), 'tls.crt'));
    expect(leaf.subject.split('\n')).toEqual(
      expect.arrayContaining(['C=DE', 'L=Berlin', 'O=opkit', 'OU=platform', 'street=Unter den Linden 1', 'postalCode=10117']),
    );
  });

  it('a forced renewal (the renew annotation) puts a new certificate and key into the Secret and bumps the revision', async () => {
    const namespace = await ns();
    await caChain(namespace);
    await cert(namespace, 'forced', { dnsNames: ['forced.example.com'], privateKey: { algorithm: 'ECDSA' } });
    await waitReady(namespace, 'forced');
    const before = await secret(namespace, 'forced');
    await plane.kubectl(['annotate', 'certificate', 'forced', '-n', namespace, `${A.renew}=2026-11-23T10:00:00Z`]);
    const c = await waitReady(namespace, 'forced', 2);
    const after = await secret(namespace, 'forced');
    expect(pem(after, 'tls.crt')).not.toBe(pem(before, 'tls.crt'));
    expect(pem(after, 'tls.key')).not.toBe(pem(before, 'tls.key'));
    expect(new X509Certificate(pem(after, 'tls.crt')).checkPrivateKey(createPrivateKey(pem(after, 'tls.key')))).toBe(true);
    expect(c.metadata.annotations?.[A.renew]).toBeUndefined();
    expect(c.status?.nextPrivateKeySecretName).toBeUndefined();
    await waitFor('the Issued event for revision 2', async () =>
      (await events(namespace, 'forced')).some((e) => e.reason === 'Issued' && /revision 2/.test(e.message ?? '')),
    );
  });

  it('ports a cert-manager Secret: the Certificate, its apiVersion changed, keeps the certificate cert-manager issued', async () => {
    const namespace = await ns();
    await caChain(namespace);
    // A certificate and key as cert-manager left them: its annotations, its type, no opkit label.
    await cert(namespace, 'original', { dnsNames: ['ported.example.com'], privateKey: { algorithm: 'ECDSA' } });
    await waitReady(namespace, 'original');
    const issued = await secret(namespace, 'original');
    const cm = 'cert-manager.io';
    await admin.create(Secret, {
      metadata: {
        name: 'ported-tls',
        namespace,
        annotations: {
          [`${cm}/certificate-name`]: 'ported',
          [`${cm}/issuer-name`]: 'ca',
          [`${cm}/issuer-kind`]: 'Issuer',
          [`${cm}/issuer-group`]: cm,
          [`${cm}/common-name`]: '',
          [`${cm}/alt-names`]: 'ported.example.com',
          [`${cm}/ip-sans`]: '',
          [`${cm}/uri-sans`]: '',
        },
      },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': issued.data!['tls.crt']!, 'tls.key': issued.data!['tls.key']!, 'ca.crt': issued.data!['ca.crt']! },
    });
    await cert(namespace, 'ported', {
      secretName: 'ported-tls',
      dnsNames: ['ported.example.com'],
      issuerRef: { name: 'ca', kind: 'Issuer', group: cm },
      privateKey: { algorithm: 'ECDSA' },
    });
    await waitFor('the ported Certificate Ready', async () => ready(await getCert(namespace, 'ported'))?.status === 'True', { timeoutMs: 30_000 });
    await new Promise((r) => setTimeout(r, 3_000));
    expect(pem(await secret(namespace, 'ported-tls'), 'tls.crt')).toBe(pem(issued, 'tls.crt'));
    expect(await requestNames(namespace, 'ported')).toEqual([]);
  });

  it('writes keystores (JKS, PKCS#12) and the extra formats into the Secret, opened by keytool and openssl; a missing password is said on the Certificate; nothing is rewritten while nothing changes; a changed password rebuilds them', async () => {
    const namespace = await ns();
    await caChain(namespace);
    await cert(namespace, 'java', {
      dnsNames: ['java.example.com'],
      privateKey: { algorithm: 'RSA' },
      keystores: {
        jks: { create: true, passwordSecretRef: { name: 'store-pass', key: 'password' }, alias: 'app' },
        pkcs12: { create: true, passwordSecretRef: { name: 'store-pass', key: 'password' }, profile: 'Modern2023' },
      },
      additionalOutputFormats: [{ type: 'DER' }, { type: 'CombinedPEM' }],
    });
    // No password yet: the Certificate says what is missing, and nothing is written.
    const waiting = await waitFor(
      'the missing password reported',
      async () => {
        const c = await getCert(namespace, 'java');
        return ready(c)?.reason === 'KeystorePasswordNotFound' && c;
      },
      { timeoutMs: 30_000 },
    );
    expect(ready(waiting)?.message).toBe('Secret "store-pass" with the JKS keystore password does not exist');
    await admin.create(Secret, { metadata: { name: 'store-pass', namespace }, stringData: { password: 'changeit-42' } });
    // The password Secret is watched: its arrival reconciles at once (it was a 30 s poll).
    await waitFor('Ready with its keystores', async () => ready(await getCert(namespace, 'java'))?.status === 'True', { timeoutMs: 10_000 });
    const s = await secret(namespace, 'java');
    expect(Object.keys(s.data ?? {}).sort()).toEqual([
      'ca.crt',
      'key.der',
      'keystore.jks',
      'keystore.p12',
      'tls-combined.pem',
      'tls.crt',
      'tls.key',
      'truststore.jks',
      'truststore.p12',
    ]);
    const dir = mkdtempSync(join(tmpdir(), 'opkit-ks-'));
    try {
      const file = (k: string) => {
        writeFileSync(join(dir, k), Buffer.from(s.data![k]!, 'base64'));
        return join(dir, k);
      };
      const jks = execFileSync('keytool', ['-list', '-keystore', file('keystore.jks'), '-storetype', 'JKS', '-storepass', 'changeit-42'], { encoding: 'utf8' });
      expect(jks).toMatch(/^app, .*PrivateKeyEntry/m);
      expect(jks).toMatch(/^ca, .*trustedCertEntry/m);
      const p12 = execFileSync('openssl', ['pkcs12', '-in', file('keystore.p12'), '-nodes', '-passin', 'pass:changeit-42'], { encoding: 'utf8' });
      expect(p12).toContain(createPrivateKey(pem(s, 'tls.key')).export({ type: 'pkcs8', format: 'pem' }).toString().trim());
      expect(execFileSync('openssl', ['rsa', '-inform', 'DER', '-in', file('key.der'), '-noout', '-check'], { encoding: 'utf8' })).toMatch(/RSA key ok/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(pem(s, 'tls-combined.pem')).toBe(`${pem(s, 'tls.key').trimEnd()}\n${pem(s, 'tls.crt').trimEnd()}\n`);
    // Salted files, yet a reconcile that changes nothing rewrites nothing.
    const rv = s.metadata.resourceVersion;
    await plane.kubectl(['annotate', 'certificate', 'java', '-n', namespace, 'touch=1']);
    await new Promise((r) => setTimeout(r, 3_000));
    expect((await secret(namespace, 'java')).metadata.resourceVersion).toBe(rv);
    // The password changes in its Secret: the keystores are rebuilt with it (cert-manager #3450,
    // #6815 never were), the certificate kept.
    await admin.patch(Secret, { namespace, name: 'store-pass' }, { data: { password: Buffer.from('changeit-43').toString('base64') } });
    const rebuilt = await waitFor('keystores rebuilt', async () => {
      const x = await secret(namespace, 'java');
      return x.metadata.resourceVersion !== rv && x;
    });
    const dir2 = mkdtempSync(join(tmpdir(), 'opkit-ks-'));
    try {
      writeFileSync(join(dir2, 'keystore.jks'), Buffer.from(rebuilt.data!['keystore.jks']!, 'base64'));
      writeFileSync(join(dir2, 'keystore.p12'), Buffer.from(rebuilt.data!['keystore.p12']!, 'base64'));
      const list = (pass: string) =>
        execFileSync('keytool', ['-list', '-keystore', join(dir2, 'keystore.jks'), '-storetype', 'JKS', '-storepass', pass], {
          encoding: 'utf8',
          stdio: 'pipe',
        });
      expect(list('changeit-43')).toMatch(/^app, .*PrivateKeyEntry/m);
      expect(() => list('changeit-42')).toThrow();
      execFileSync('openssl', ['pkcs12', '-in', join(dir2, 'keystore.p12'), '-nodes', '-passin', 'pass:changeit-43'], { stdio: 'pipe' });
    } finally {
      rmSync(dir2, { recursive: true, force: true });
    }
    expect(pem(rebuilt, 'tls.crt')).toBe(pem(s, 'tls.crt'));
    expect((await getCert(namespace, 'java')).status?.revision).toBe(1);
    // Asked for no keystores any more: they leave the Secret; the certificate is not re-issued.
    await plane.kubectl([
      'patch',
      'certificate',
      'java',
      '-n',
      namespace,
      '--type=json',
      '-p',
      JSON.stringify([
        { op: 'remove', path: '/spec/keystores' },
        { op: 'remove', path: '/spec/additionalOutputFormats' },
      ]),
    ]);
    await waitFor(
      'the keystores removed',
      async () =>
        Object.keys((await secret(namespace, 'java')).data ?? {})
          .sort()
          .join() === 'ca.crt,tls.crt,tls.key',
    );
    expect((await getCert(namespace, 'java')).status?.revision).toBe(1);
  });

  it('issues with literalSubject, otherNames, a CA with nameConstraints and usages kept out of the CSR, and settles (no re-issue)', async () => {
    const namespace = await ns();
    await apply({ apiVersion: 'cert.opkit.dev/v1', kind: 'Issuer', metadata: { name: 'selfsigned', namespace }, spec: { selfSigned: {} } });
    await cert(namespace, 'constrained', {
      isCA: true,
      commonName: 'constrained CA',
      secretName: 'constrained',
      issuerRef: { name: 'selfsigned' },
      privateKey: { algorithm: 'ECDSA' },
      nameConstraints: { permitted: { dnsDomains: ['example.com'] } },
    });
    await waitReady(namespace, 'constrained');
    await apply({ apiVersion: 'cert.opkit.dev/v1', kind: 'Issuer', metadata: { name: 'ca', namespace }, spec: { ca: { secretName: 'constrained' } } });
    await waitFor('the CA issuer Ready', async () => (await admin.get(Issuer.kind, { namespace, name: 'ca' })).status?.conditions?.[0]?.status === 'True');
    await cert(namespace, 'literal', {
      literalSubject: 'CN=app.example.com,O=Example,C=DE',
      dnsNames: ['app.example.com'],
      otherNames: [{ oid: '1.3.6.1.4.1.311.20.2.3', utf8Value: 'app@example.com' }],
      encodeUsagesInRequest: false,
      usages: ['server auth', 'digital signature'],
    });
    await waitReady(namespace, 'literal');
    const leaf = new X509Certificate(pem(await secret(namespace, 'literal'), 'tls.crt'));
    expect(leaf.subject.split('\n')).toEqual(['C=DE', 'O=Example', 'CN=app.example.com']);
    expect(leaf.subjectAltName).toBe('DNS:app.example.com, othername:UPN:app@example.com');
    expect(leaf.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    // Nothing about the request differs from the spec: no second issuance.
    await new Promise((r) => setTimeout(r, 3_000));
    expect((await getCert(namespace, 'literal')).status?.revision).toBe(1);
    expect((await getCert(namespace, 'constrained')).status?.revision).toBe(1);
    // Refused at the door: constraints on a certificate that is not a CA, and literalSubject with commonName.
    const refused = await plane.kubectl(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'cert.opkit.dev/v1',
        kind: 'Certificate',
        metadata: { name: 'bad', namespace },
        spec: { secretName: 'bad', commonName: 'x', literalSubject: 'CN=x', nameConstraints: { permitted: { dnsDomains: ['x'] } }, issuerRef: { name: 'ca' } },
      }),
      check: false,
    });
    expect(refused.stderr).toMatch(/literalSubject replaces commonName and subject/);
    expect(refused.stderr).toMatch(/nameConstraints are for CA certificates/);
  });

  it('refuses the LegacyRC2 PKCS#12 profile with a reason', async () => {
    const namespace = await ns();
    await cert(namespace, 'rc2', { dnsNames: ['rc2.example.com'], keystores: { pkcs12: { create: true, password: 'x', profile: 'LegacyRC2' } } });
    const c = await waitFor('InvalidSpec', async () => {
      const x = await getCert(namespace, 'rc2');
      return ready(x)?.reason === 'InvalidSpec' && x;
    });
    expect(ready(c)?.message).toMatch(/LegacyRC2 is not supported .* use LegacyDES/);
  });

  it('as cert-manager: any RSA size from 2048 to 8192, a common name outside the SANs (not ACME), CRL/OCSP/CA-issuer URLs in the leaf, a SelfSigned CRL URL', async () => {
    const namespace = await ns();
    await caChain(namespace);
    await apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'Issuer',
      metadata: { name: 'ca-urls', namespace },
      spec: {
        ca: {
          secretName: 'root-ca',
          crlDistributionPoints: ['http://crl.example.com/ca.crl'],
          ocspServers: ['http://ocsp.example.com'],
          issuingCertificateURLs: ['http://pki.example.com/ca.crt'],
        },
      },
    });
    await waitFor('ca-urls Ready', async () => (await admin.get(Issuer.kind, { namespace, name: 'ca-urls' })).status?.conditions?.[0]?.status === 'True');
    await cert(namespace, 'extras', {
      commonName: 'Internal Service',
      dnsNames: ['extras.example.com'],
      issuerRef: { name: 'ca-urls' },
      privateKey: { algorithm: 'RSA', size: 2560 },
    });
    await waitReady(namespace, 'extras');
    const s = await secret(namespace, 'extras');
    expect(createPrivateKey(pem(s, 'tls.key')).asymmetricKeyDetails?.modulusLength).toBe(2560);
    const leaf = new X509Certificate(pem(s, 'tls.crt'));
    expect(leaf.subject).toBe('CN=Internal Service');
    expect(leaf.infoAccess?.split('\n')).toEqual(
      expect.arrayContaining(['OCSP - URI:http://ocsp.example.com', 'CA Issuers - URI:http://pki.example.com/ca.crt']),
    );
    const text = (await import('node:child_process'))
      .execFileSync('openssl', ['x509', '-noout', '-ext', 'crlDistributionPoints'], { input: pem(s, 'tls.crt') })
      .toString();
    expect(text).toContain('URI:http://crl.example.com/ca.crl');
    // A SelfSigned issuer's crlDistributionPoints, in the certificate it signs.
    await apply({
      apiVersion: 'cert.opkit.dev/v1',
      kind: 'Issuer',
      metadata: { name: 'self-crl', namespace },
      spec: { selfSigned: { crlDistributionPoints: ['http://crl.example.com/self.crl'] } },
    });
    await waitFor('self-crl Ready', async () => (await admin.get(Issuer.kind, { namespace, name: 'self-crl' })).status?.conditions?.[0]?.status === 'True');
    await cert(namespace, 'self', { dnsNames: ['self.example.com'], issuerRef: { name: 'self-crl' } });
    await waitReady(namespace, 'self');
    const self = (await import('node:child_process'))
      .execFileSync('openssl', ['x509', '-noout', '-ext', 'crlDistributionPoints'], { input: pem(await secret(namespace, 'self'), 'tls.crt') })
      .toString();
    expect(self).toContain('URI:http://crl.example.com/self.crl');
    // Out of range: the API server says so at apply time.
    await expect(
      cert(namespace, 'tiny', { dnsNames: ['t.example.com'], issuerRef: { name: 'ca' }, privateKey: { algorithm: 'RSA', size: 1000 } }),
    ).rejects.toThrow(/2048/);
  });

  it('rotationPolicy Never with a key that no longer fits the spec: says so and waits, no new key', async () => {
    const namespace = await ns();
    await caChain(namespace);
    await cert(namespace, 'kept', { dnsNames: ['kept.example.com'], privateKey: { algorithm: 'ECDSA', rotationPolicy: 'Never' } });
    await waitReady(namespace, 'kept');
    const key = pem(await secret(namespace, 'kept'), 'tls.key');
    await cert(namespace, 'kept', { dnsNames: ['kept.example.com'], privateKey: { algorithm: 'RSA', size: 2048, rotationPolicy: 'Never' } });
    const c = await waitFor('CannotRegenerateKey', async () => {
      const x = await getCert(namespace, 'kept');
      return ready(x)?.reason === 'CannotRegenerateKey' && x;
    });
    expect(ready(c)?.message).toMatch(/private key in Secret "kept" is ECDSA.*RSA 2048.*rotationPolicy is Never/);
    await new Promise((r) => setTimeout(r, 3_000));
    expect(pem(await secret(namespace, 'kept'), 'tls.key')).toBe(key);
    expect(await requestNames(namespace, 'kept')).toEqual(['kept-1']);
    await waitFor('the CannotRegenerateKey warning', async () =>
      (await events(namespace, 'kept')).some((e) => e.reason === 'CannotRegenerateKey' && e.type === 'Warning'),
    );
  });

  it("signs for a ClusterIssuer from the cluster resource namespace, and ports cert-manager's issuerRef group", async () => {
    const namespace = await ns();
    await caChain(namespace);
    const root = await secret(namespace, 'root-ca');
    await admin.create(Secret, {
      metadata: { name: 'cluster-ca', namespace: SYSTEM },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': root.data!['tls.crt']!, 'tls.key': root.data!['tls.key']! },
    });
    await apply({ apiVersion: 'cert.opkit.dev/v1', kind: 'ClusterIssuer', metadata: { name: 'cluster-ca' }, spec: { ca: { secretName: 'cluster-ca' } } });
    await cert(namespace, 'ported', { dnsNames: ['ported.example.com'], issuerRef: { name: 'cluster-ca', kind: 'ClusterIssuer', group: 'cert-manager.io' } });
    await waitReady(namespace, 'ported');
    const leaf = new X509Certificate(pem(await secret(namespace, 'ported'), 'tls.crt'));
    expect(leaf.checkIssued(new X509Certificate(pem(root, 'tls.crt')))).toBe(true);
  });

  it('caches only the Secrets it owns or labels in full', async () => {
    const namespace = await ns();
    await admin.create(Secret, { metadata: { name: 'unrelated', namespace }, stringData: { password: 'hunter2' } });
    await waitFor('the metadata cache to see it', async () => !!(await manager.cache.get(Secret, { namespace, name: 'unrelated' }, METADATA)));
    expect((await manager.cache.get(Secret, { namespace, name: 'unrelated' }, METADATA))?.data).toBeUndefined();
    expect(await manager.cache.get(Secret, { namespace, name: 'unrelated' }, CERT_APIS.opkit.labelled)).toBeUndefined();
    const full = await manager.cache.list(Secret, {}, CERT_APIS.opkit.labelled);
    expect(full.every((s) => s.metadata.labels?.['controller.cert.opkit.dev/fao'] === 'true')).toBe(true);
  });
});
