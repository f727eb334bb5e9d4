import { execFileSync, spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { x509 } from './crypto-provider.js';
import { describe, expect, it } from 'vitest';
import type { CertificateSpecType } from '../api/v1/certificate.js';
import { createCSR, parseCSR } from './csr.js';
import { formatDuration, parseDuration } from '@opkit/runtime';
import { certificateMatchesKey, inspectCertificate, splitPem } from './inspect.js';
import { describeKey, encodePrivateKey, generatePrivateKey, keySpecOf, keySpecProblem, parsePrivateKey } from './keys.js';
import { issuanceBackoffMs, renewalTime } from './renewal.js';
import { caKeyPairProblem, caSign, selfSign } from './sign.js';

const spec = (s: Partial<CertificateSpecType> = {}): CertificateSpecType => ({ secretName: 's', issuerRef: { name: 'i' }, ...s });
const HOUR = 3_600_000;

describe('keys', () => {
  it("follows cert-manager's defaults and encodings", async () => {
    expect(keySpecOf(undefined)).toEqual({ algorithm: 'RSA', size: 2048, encoding: 'PKCS1' });
    expect(keySpecOf({ algorithm: 'ECDSA' })).toEqual({ algorithm: 'ECDSA', size: 256, encoding: 'PKCS1' });
    expect(keySpecOf({ algorithm: 'Ed25519', encoding: 'PKCS1' })).toEqual({ algorithm: 'Ed25519', size: 0, encoding: 'PKCS8' });
    const ec = await generatePrivateKey({ algorithm: 'ECDSA', size: 384, encoding: 'PKCS1' });
    expect(encodePrivateKey(ec, 'PKCS1')).toMatch(/^-----BEGIN EC PRIVATE KEY-----/);
    expect(encodePrivateKey(ec, 'PKCS8')).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(describeKey(parsePrivateKey(encodePrivateKey(ec, 'PKCS1')))).toEqual({ algorithm: 'ECDSA', size: 384 });
  });
  it('names unsupported sizes', () => {
    expect(keySpecProblem({ algorithm: 'RSA', size: 1024, encoding: 'PKCS1' })).toBe('RSA key size 1024 is not supported: use a size from 2048 to 8192');
    expect(keySpecProblem({ algorithm: 'ECDSA', size: 255, encoding: 'PKCS1' })).toMatch(/ECDSA key size 255/);
  });
});

describe('CSRs and signing', () => {
  it('parses and verifies a CSR once: the same request gives the same read-only result, a forged one fails each time', async () => {
    const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 256, encoding: 'PKCS1' });
    const pem = await createCSR(spec({ dnsNames: ['memo.example.com'] }), key);
    const first = await parseCSR(pem);
    expect(await parseCSR(pem)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    // The same CSR with one byte of its signature flipped.
    const der = Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
    der[der.length - 2]! ^= 1;
    const forged = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
    for (let i = 0; i < 2; i++) await expect(parseCSR(forged)).rejects.toThrow(/invalid signature|cannot be checked/);
  });

  it('self-signs a CA, then signs a leaf that chains to it with the requested SANs and usages', async () => {
    const caKey = await generatePrivateKey({ algorithm: 'ECDSA', size: 256, encoding: 'PKCS1' });
    const caCsr = await parseCSR(await createCSR(spec({ commonName: 'opkit test CA', isCA: true, subject: { organizations: ['opkit'] } }), caKey));
    const ca = await selfSign({ csr: caCsr, durationMs: 24 * HOUR, isCA: true, usages: ['cert sign', 'digital signature'] }, caKey);
    expect(caKeyPairProblem(ca.certificate, caKey)).toBeUndefined();

    const leafKey = await generatePrivateKey({ algorithm: 'RSA', size: 2048, encoding: 'PKCS1' });
    const csrPem = await createCSR(
      spec({
        commonName: 'a.example.com',
        dnsNames: ['a.example.com', 'b.example.com'],
        ipAddresses: ['10.1.2.3'],
        usages: ['server auth', 'digital signature'],
      }),
      leafKey,
    );
    const csr = await parseCSR(csrPem);
    expect(csr).toMatchObject({ commonName: 'a.example.com', dnsNames: ['a.example.com', 'b.example.com'], ipAddresses: ['10.1.2.3'] });
    const issued = await caSign({ csr, durationMs: HOUR, isCA: false, usages: ['server auth', 'digital signature'] }, { chainPem: ca.certificate, key: caKey });

    const [leafPem = '', caPem = ''] = splitPem(issued.certificate);
    const leaf = new X509Certificate(leafPem);
    expect(leaf.verify(new X509Certificate(caPem).publicKey)).toBe(true);
    expect(leaf.checkIssued(new X509Certificate(caPem))).toBe(true);
    expect(issued.ca.trim()).toBe(caPem);
    expect(certificateMatchesKey(issued.certificate, leafKey)).toBe(true);
    const info = inspectCertificate(issued.certificate);
    expect(info).toMatchObject({ commonName: 'a.example.com', dnsNames: ['a.example.com', 'b.example.com'], ipAddresses: ['10.1.2.3'], isCA: false });
    expect(info.notAfter.getTime() - info.notBefore.getTime()).toBe(HOUR);
    expect(leaf.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
  });

  // The leaf's authority key id was computed from the CA's key (RFC 5280's method 1), which breaks
  // chain building for a CA whose subject key id was made another way (many CAs; RFC 7093).
  it("copies the CA's subject key identifier into the leaf's authority key identifier, however the CA made it", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'opkit-ski-'));
    try {
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:P-256',
          '-nodes',
          '-keyout',
          join(dir, 'ca.key'),
          '-out',
          join(dir, 'ca.pem'),
          '-subj',
          '/CN=a CA with its own key ids',
          '-days',
          '30',
          '-addext',
          'basicConstraints=critical,CA:TRUE',
          '-addext',
          'keyUsage=critical,keyCertSign',
          '-addext',
          'subjectKeyIdentifier=0102030405060708',
        ],
        { stdio: 'ignore' },
      );
      const caPem = readFileSync(join(dir, 'ca.pem'), 'utf8');
      const caKey = parsePrivateKey(readFileSync(join(dir, 'ca.key'), 'utf8'));
      const leafKey = await generatePrivateKey({ algorithm: 'ECDSA', size: 256, encoding: 'PKCS1' });
      const csr = await parseCSR(await createCSR(spec({ dnsNames: ['leaf.example.com'] }), leafKey));
      const issued = await caSign({ csr, durationMs: HOUR, isCA: false, usages: ['server auth'] }, { chainPem: caPem, key: caKey });
      const aki = new x509.X509Certificate(splitPem(issued.certificate)[0]!).getExtension(x509.AuthorityKeyIdentifierExtension);
      expect(aki?.keyId).toBe('0102030405060708');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('marks the SANs critical when the subject is empty, as RFC 5280 requires (Java refuses such a certificate otherwise)', async () => {
    const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 256, encoding: 'PKCS1' });
    const critical = (pem: string, kind: 'csr' | 'cert') =>
      (kind === 'csr' ? new x509.Pkcs10CertificateRequest(pem) : new x509.X509Certificate(pem)).getExtension('2.5.29.17')?.critical;
    for (const [s, want] of [
      [spec({ dnsNames: ['only.example.com'] }), true],
      [spec({ dnsNames: ['named.example.com'], commonName: 'named.example.com' }), false],
      [spec({ dnsNames: ['org.example.com'], subject: { organizations: ['opkit'] } }), false],
    ] as const) {
      const csrPem = await createCSR(s, key);
      expect(critical(csrPem, 'csr')).toBe(want);
      const issued = await selfSign({ csr: await parseCSR(csrPem), durationMs: HOUR, isCA: false, usages: ['digital signature'] }, key);
      expect(critical(issued.certificate, 'cert')).toBe(want);
    }
  });

  it("writes literalSubject, otherNames and a CA's nameConstraints as OpenSSL reads them, and leaves usages out of the CSR when asked", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'opkit-pki-'));
    const file = (name: string, pem: string) => (writeFileSync(join(dir, name), pem), join(dir, name));
    const openssl = (...args: string[]) => execFileSync('openssl', args, { encoding: 'utf8' });
    try {
      const caKey = await generatePrivateKey({ algorithm: 'ECDSA', size: 256, encoding: 'PKCS1' });
      const caSpec = spec({
        commonName: 'constrained CA',
        isCA: true,
        nameConstraints: {
          critical: true,
          permitted: { dnsDomains: ['example.com'], ipRanges: ['10.0.0.0/8'] },
          excluded: { dnsDomains: ['secret.example.com'] },
        },
      });
      const ca = await selfSign({ csr: await parseCSR(await createCSR(caSpec, caKey)), durationMs: 24 * HOUR, isCA: true, usages: ['cert sign'] }, caKey);
      const caText = openssl('x509', '-in', file('ca.pem', ca.certificate), '-noout', '-text');
      expect(caText).toMatch(/X509v3 Name Constraints: critical\s+Permitted:\s+DNS:example.com\s+IP:10.0.0.0\/255.0.0.0\s+Excluded:\s+DNS:secret.example.com/);

      const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 256, encoding: 'PKCS1' });
      const leafSpec = spec({
        literalSubject: 'CN=app.example.com,OU=web,O=Example\\, Inc.,C=DE',
        dnsNames: ['app.example.com'],
        otherNames: [{ oid: '1.3.6.1.4.1.311.20.2.3', utf8Value: 'app@example.com' }],
        encodeUsagesInRequest: false,
        usages: ['server auth', 'digital signature'],
      });
      const csrPem = await createCSR(leafSpec, key);
      const csr = await parseCSR(csrPem);
      expect(csr.otherNames).toEqual([{ oid: '1.3.6.1.4.1.311.20.2.3', utf8Value: 'app@example.com' }]);
      const csrText = openssl('req', '-in', file('leaf.csr', csrPem), '-noout', '-text', '-nameopt', 'RFC2253');
      expect(csrText).toContain('Subject: CN=app.example.com,OU=web,O=Example\\, Inc.,C=DE');
      expect(csrText).not.toMatch(/Key Usage/);
      const leaf = await caSign({ csr, durationMs: HOUR, isCA: false, usages: ['server auth', 'digital signature'] }, { chainPem: ca.certificate, key: caKey });
      const leafText = openssl('x509', '-in', file('leaf.pem', leaf.certificate), '-noout', '-text', '-nameopt', 'RFC2253');
      expect(leafText).toContain('Subject: CN=app.example.com,OU=web,O=Example\\, Inc.,C=DE');
      expect(leafText).toMatch(/X509v3 Subject Alternative Name:\s+DNS:app.example.com, othername: UPN::app@example.com/);
      expect(leafText).toMatch(/TLS Web Server Authentication/);
      // The constraints hold: a name inside them verifies, one outside does not.
      expect(openssl('verify', '-CAfile', join(dir, 'ca.pem'), join(dir, 'leaf.pem'))).toMatch(/OK/);
      const outside = await caSign(
        { csr: await parseCSR(await createCSR(spec({ dnsNames: ['secret.example.com'] }), key)), durationMs: HOUR, isCA: false, usages: ['server auth'] },
        { chainPem: ca.certificate, key: caKey },
      );
      const r = spawnSync('openssl', ['verify', '-CAfile', join(dir, 'ca.pem'), file('outside.pem', outside.certificate)], { encoding: 'utf8' });
      expect(r.status).not.toBe(0);
      expect(r.stdout + r.stderr).toMatch(/excluded subtree violation/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("never issues past its CA's expiry", async () => {
    const caKey = await generatePrivateKey({ algorithm: 'ECDSA', size: 256, encoding: 'PKCS1' });
    const ca = await selfSign(
      { csr: await parseCSR(await createCSR(spec({ commonName: 'short CA', isCA: true }), caKey)), durationMs: 2 * HOUR, isCA: true, usages: ['cert sign'] },
      caKey,
    );
    const key = await generatePrivateKey({ algorithm: 'Ed25519', size: 0, encoding: 'PKCS8' });
    const issued = await caSign(
      { csr: await parseCSR(await createCSR(spec({ dnsNames: ['x.example.com'] }), key)), durationMs: 100 * HOUR, isCA: false, usages: ['digital signature'] },
      { chainPem: ca.certificate, key: caKey },
    );
    expect(inspectCertificate(issued.certificate).notAfter.getTime()).toBe(inspectCertificate(ca.certificate).notAfter.getTime());
  });

  it('refuses a tampered CSR and explains what is wrong with a CA pair', async () => {
    await expect(parseCSR('-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----')).rejects.toThrow(
      /not a PEM certificate signing request/,
    );
    const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 256, encoding: 'PKCS1' });
    const other = await generatePrivateKey({ algorithm: 'ECDSA', size: 256, encoding: 'PKCS1' });
    const leaf = await selfSign(
      { csr: await parseCSR(await createCSR(spec({ dnsNames: ['l.example.com'] }), key)), durationMs: HOUR, isCA: false, usages: ['digital signature'] },
      key,
    );
    expect(caKeyPairProblem(leaf.certificate, key)).toMatch(/not a CA certificate/);
    const ca = await selfSign(
      { csr: await parseCSR(await createCSR(spec({ commonName: 'ca', isCA: true }), key)), durationMs: HOUR, isCA: true, usages: ['cert sign'] },
      key,
    );
    expect(caKeyPairProblem(ca.certificate, other)).toBe('its tls.key does not match its tls.crt');
    expect(caKeyPairProblem(undefined, key)).toBe('it has no tls.crt');
  });
});

describe('durations and renewal', () => {
  it('parses Go durations', () => {
    expect(parseDuration('2160h')).toBe(2160 * HOUR);
    expect(parseDuration('1h30m')).toBe(1.5 * HOUR);
    expect(() => parseDuration('90d')).toThrow(/use Go's format/);
    expect(formatDuration(2160 * HOUR)).toBe('2160h');
  });
  it('renews at two thirds of the issued lifetime by default, or as told', () => {
    const nb = new Date('2026-01-01T00:00:00Z');
    const na = new Date('2026-04-01T00:00:00Z'); // 90 days
    expect(renewalTime(nb, na)?.toISOString()).toBe('2026-03-02T00:00:00.000Z');
    expect(renewalTime(nb, na, { renewBefore: '720h' })?.toISOString()).toBe('2026-03-02T00:00:00.000Z');
    expect(renewalTime(nb, na, { renewBefore: '24h' })?.toISOString()).toBe('2026-03-31T00:00:00.000Z');
    expect(renewalTime(nb, na, { renewBefore: '9999h' })?.toISOString()).toBe('2026-03-02T00:00:00.000Z'); // longer than the lifetime: ignored
    expect(renewalTime(nb, na, { renewBeforePercentage: 10 })?.toISOString()).toBe('2026-03-23T00:00:00.000Z');
    expect(renewalTime(new Date('2026-01-01T00:00:00.000Z'), new Date('2026-01-01T01:00:00.500Z'))?.toISOString()).toBe('2026-01-01T00:40:00.000Z');
  });
  it('backs off failed issuances from 1 h, doubling, to 32 h', () => {
    expect([1, 2, 3, 6, 7, 20].map((n) => issuanceBackoffMs(n) / HOUR)).toEqual([1, 2, 4, 32, 32, 32]);
  });
});
