import { execFileSync, spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { CertificateSpecType } from '../api/v1/certificate.js';
import type { KeyUsage } from '../api/v1/shared.js';
import { x509 } from './crypto-provider.js';
import { createCSR, CsrError, parseCSR } from './csr.js';
import { time, unsignedInteger } from './der.js';
import { generatePrivateKey, type KeySpec } from './keys.js';
import { caSign, selfSign } from './sign.js';
import { usageExtensions } from './usages.js';
import { pemBlock, readCertificate } from './x509-read.js';

// CSRs and certificates are written and read by hand (x509-write.ts, x509-read.ts). These read
// them back with two independent implementations, the x509 library (asn1js) and OpenSSL, and read
// requests that OpenSSL wrote.

const dir = mkdtempSync(join(tmpdir(), 'opkit-x509-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
const openssl = (...args: string[]) => execFileSync('openssl', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const spec = (s: Partial<CertificateSpecType> = {}): CertificateSpecType => ({ secretName: 's', issuerRef: { name: 'i' }, ...s });
const HOUR = 3_600_000;

const KEYS: KeySpec[] = [
  { algorithm: 'ECDSA', size: 256, encoding: 'PKCS1' },
  { algorithm: 'ECDSA', size: 384, encoding: 'PKCS1' },
  { algorithm: 'ECDSA', size: 521, encoding: 'PKCS1' },
  { algorithm: 'RSA', size: 2048, encoding: 'PKCS1' },
  { algorithm: 'Ed25519', size: 0, encoding: 'PKCS8' },
];

describe('CSRs and certificates written by hand', () => {
  it.each(KEYS)('signs with $algorithm $size: the x509 library and OpenSSL verify the CSR and the chain', async (keySpec) => {
    const key = await generatePrivateKey(keySpec);
    const name = `${keySpec.algorithm}${keySpec.size}`;
    const csrPem = await createCSR(
      spec({
        commonName: 'a.example.com',
        dnsNames: ['a.example.com'],
        ipAddresses: ['10.0.0.1', 'fd00::1'],
        subject: { organizations: ['opkit'], countries: ['DE'] },
      }),
      key,
    );
    const library = new x509.Pkcs10CertificateRequest(csrPem);
    expect(await library.verify()).toBe(true);
    expect(library.subject).toBe('C=DE, O=opkit, CN=a.example.com'); // in encoded order: cert-manager's, the common name last
    expect(new x509.SubjectAlternativeNameExtension(library.getExtension('2.5.29.17')!.rawData).names.toJSON().map((n) => n.value)).toEqual([
      'a.example.com',
      '10.0.0.1',
      'fd00::1',
    ]);
    expect(openssl('req', '-in', file(`${name}.csr`, csrPem), '-noout', '-verify')).toBe('');

    const caKey = await generatePrivateKey(keySpec);
    const ca = await selfSign(
      { csr: await parseCSR(await createCSR(spec({ commonName: 'test CA', isCA: true }), caKey)), durationMs: 24 * HOUR, isCA: true, usages: ['cert sign'] },
      caKey,
    );
    const leaf = await caSign(
      { csr: await parseCSR(csrPem), durationMs: HOUR, isCA: false, usages: ['server auth', 'digital signature'] },
      { chainPem: ca.certificate, key: caKey },
    );
    const [leafPem, caPem] = leaf.certificate.trim().split(/\n(?=-----BEGIN)/);
    const parsed = new x509.X509Certificate(leafPem!);
    expect(await parsed.verify({ publicKey: new x509.X509Certificate(caPem!).publicKey, signatureOnly: true })).toBe(true);
    expect(parsed.issuer).toBe('CN=test CA');
    expect(new x509.BasicConstraintsExtension(parsed.getExtension('2.5.29.19')!.rawData).ca).toBe(false);
    expect(new X509Certificate(leafPem!).checkIssued(new X509Certificate(caPem!))).toBe(true);
    expect(openssl('verify', '-CAfile', file(`${name}-ca.pem`, ca.certificate), file(`${name}-leaf.pem`, leaf.certificate))).toMatch(/OK/);
  });

  it('encodes every set of key usages as the x509 library does (DER named bits: trailing zeros dropped)', () => {
    const FLAGS: [KeyUsage, number][] = [
      ['digital signature', x509.KeyUsageFlags.digitalSignature],
      ['content commitment', x509.KeyUsageFlags.nonRepudiation],
      ['key encipherment', x509.KeyUsageFlags.keyEncipherment],
      ['data encipherment', x509.KeyUsageFlags.dataEncipherment],
      ['key agreement', x509.KeyUsageFlags.keyAgreement],
      ['cert sign', x509.KeyUsageFlags.keyCertSign],
      ['crl sign', x509.KeyUsageFlags.cRLSign],
      ['encipher only', x509.KeyUsageFlags.encipherOnly],
      ['decipher only', x509.KeyUsageFlags.decipherOnly],
    ];
    fc.assert(
      fc.property(fc.subarray(FLAGS, { minLength: 1 }), (chosen) => {
        const [ours] = usageExtensions(chosen.map(([u]) => u));
        const theirs = new x509.KeyUsagesExtension(
          chosen.reduce((f, [, b]) => f | b, 0),
          true,
        );
        expect(ours!.rawData.toString('hex')).toBe(Buffer.from(theirs.rawData).toString('hex'));
      }),
    );
  });

  it('writes times as RFC 5280 says (UTCTime through 2049, GeneralizedTime after) and serials in their shortest positive form', () => {
    expect(time(new Date('2049-12-31T23:59:59Z')).toString('latin1')).toBe('\x17\x0d491231235959Z');
    expect(time(new Date('2050-01-01T00:00:00Z')).toString('latin1')).toBe('\x18\x0f20500101000000Z');
    expect(unsignedInteger(Buffer.from([0, 0, 0x7f])).toString('hex')).toBe('02017f');
    expect(unsignedInteger(Buffer.from([0x80])).toString('hex')).toBe('02020080');
    expect(unsignedInteger(Buffer.from([0, 0])).toString('hex')).toBe('020100');
  });

  it('reads a certificate that lives past 2049 back with its expiry', async () => {
    const key = await generatePrivateKey(KEYS[0]!);
    const now = new Date('2045-01-01T00:00:00Z');
    const issued = await selfSign(
      {
        csr: await parseCSR(await createCSR(spec({ commonName: 'long' }), key)),
        durationMs: 10 * 365 * 24 * HOUR,
        isCA: false,
        usages: ['digital signature'],
        now,
      },
      key,
    );
    expect(new Date(new X509Certificate(issued.certificate).validTo).getUTCFullYear()).toBe(2054);
  });
});

describe('CSRs other software wrote', () => {
  const csrBy = (name: string, keyArgs: string[], extra: string[] = []) => {
    const keyFile = join(dir, `${name}.key`);
    execFileSync('openssl', ['genpkey', ...keyArgs, '-out', keyFile], { stdio: 'ignore' });
    return openssl('req', '-new', '-key', keyFile, '-subj', '/O=Example, Inc./CN=b.example.com', '-addext', 'subjectAltName=DNS:b.example.com', ...extra);
  };

  it.each([
    ['RSA, SHA-256', ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048'], []],
    ['RSA-PSS, SHA-256', ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048'], ['-sigopt', 'rsa_padding_mode:pss', '-sigopt', 'rsa_pss_saltlen:32']],
    ['ECDSA P-384, SHA-384', ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-384'], ['-sha384']],
    ['Ed25519', ['-algorithm', 'ED25519'], []],
  ])("reads and verifies OpenSSL's %s request", async (label, keyArgs, extra) => {
    const csr = await parseCSR(csrBy(label.replace(/\W+/g, '-'), keyArgs, extra));
    expect(csr.commonName).toBe('b.example.com');
    expect(csr.organizations).toEqual(['Example, Inc.']);
    expect(csr.dnsNames).toEqual(['b.example.com']);
  });

  it('refuses a SHA-1 signature as unchecked (as Go refuses it for cert-manager), and a flipped bit as invalid', async () => {
    const sha1 = csrBy('sha1', ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048'], ['-sha1']);
    await expect(parseCSR(sha1)).rejects.toThrow(
      new CsrError(
        "the certificate signing request's signature cannot be checked: the signature algorithm 1.2.840.113549.1.1.5 is not one this operator checks (ECDSA, RSA or RSASSA-PSS with SHA-256 or wider, Ed25519)",
      ),
    );
    const der = pemBlock(csrBy('flip', ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256']), ['CERTIFICATE REQUEST']);
    // A byte of the subject: the structure still parses, the signature no longer holds.
    der[der.indexOf(Buffer.from('b.example.com')) + 1]! ^= 1;
    await expect(parseCSR(`-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`)).rejects.toThrow(
      /invalid signature/,
    );
  });

  it('reads a certificate OpenSSL wrote: issuer, subject and extensions as encoded', () => {
    const keyFile = join(dir, 'ossl-cert.key');
    execFileSync('openssl', ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', keyFile], { stdio: 'ignore' });
    const pem = openssl('req', '-x509', '-new', '-key', keyFile, '-subj', '/CN=ossl', '-addext', 'subjectAltName=DNS:ossl.example.com', '-days', '1');
    const parts = readCertificate(pemBlock(pem, ['CERTIFICATE']));
    const node = new X509Certificate(pem);
    expect(parts.subject.equals(parts.issuer)).toBe(true);
    expect(parts.extensions.map((e) => e.type)).toContain('2.5.29.17');
    expect(parts.spki.equals(node.publicKey.export({ type: 'spki', format: 'der' }))).toBe(true);
    expect(spawnSync('openssl', ['version']).status).toBe(0);
  });
});
