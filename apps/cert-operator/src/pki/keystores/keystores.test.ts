import { execFileSync, spawnSync } from 'node:child_process';
import { createSecureContext } from 'node:tls';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate, type KeyObject } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CertificateSpecType } from '../../api/v1/certificate.js';
import { createCSR, parseCSR } from '../csr.js';
import { splitPem } from '../inspect.js';
import { generatePrivateKey } from '../keys.js';
import { caSign, selfSign } from '../sign.js';
import { encodeJksKeystore, encodeJksTruststore } from './jks.js';
import { encodePkcs12Keystore, encodePkcs12Truststore, type Pkcs12Profile } from './pkcs12.js';

const spec = (s: Partial<CertificateSpecType>): CertificateSpecType => ({ secretName: 's', issuerRef: { name: 'i' }, ...s });
const HOUR = 3_600_000;
// Java decodes a password given on keytool's command line in the platform charset: ASCII here, so
// non-ASCII passwords are tested with OpenSSL and Node only.
const PASSWORD = 'changeit-7';
const UNICODE_PASSWORD = 'chang€it-ü';
const has = (cmd: string) => spawnSync(cmd, ['-help'], { stdio: 'ignore' }).error === undefined;
/** A tool's stdout; its stderr in the error when it fails. */
const tool = (cmd: string, args: string[]) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}${r.stdout}`);
  return r.stdout;
};

/** A CA, an intermediate and a leaf (RSA, so every reader takes it), as a CA issuer would write them. */
async function chain() {
  const rootKey = await generatePrivateKey({ algorithm: 'ECDSA', size: 256, encoding: 'PKCS1' });
  const root = await selfSign(
    {
      csr: await parseCSR(await createCSR(spec({ commonName: 'keystore root', isCA: true }), rootKey)),
      durationMs: 24 * HOUR,
      isCA: true,
      usages: ['cert sign'],
    },
    rootKey,
  );
  const midKey = await generatePrivateKey({ algorithm: 'ECDSA', size: 256, encoding: 'PKCS1' });
  const mid = await caSign(
    {
      csr: await parseCSR(await createCSR(spec({ commonName: 'keystore intermediate', isCA: true }), midKey)),
      durationMs: 12 * HOUR,
      isCA: true,
      usages: ['cert sign'],
    },
    { chainPem: root.certificate, key: rootKey },
  );
  const key = await generatePrivateKey({ algorithm: 'RSA', size: 2048, encoding: 'PKCS1' });
  const leaf = await caSign(
    {
      csr: await parseCSR(await createCSR(spec({ dnsNames: ['app.example.com'] }), key)),
      durationMs: HOUR,
      isCA: false,
      usages: ['server auth', 'digital signature', 'key encipherment'],
    },
    { chainPem: mid.certificate, key: midKey },
  );
  return { key, chain: splitPem(leaf.certificate).map((p) => new X509Certificate(p)), ca: new X509Certificate(root.certificate) };
}

describe('keystores, opened by the tools that read them', () => {
  let dir: string;
  let c: { key: KeyObject; chain: X509Certificate[]; ca: X509Certificate };
  const file = (name: string, data: Buffer) => {
    const p = join(dir, name);
    writeFileSync(p, data);
    return p;
  };
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'opkit-keystores-'));
    c = await chain();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each<Pkcs12Profile>(['LegacyDES', 'Modern2023'])(
    'PKCS#12 keystore, %s: openssl verifies the MAC and finds the key and the whole chain; Node loads it for TLS',
    (profile) => {
      const p12 = encodePkcs12Keystore({ key: c.key, chain: c.chain, ca: [c.ca], password: PASSWORD, profile });
      const path = file(`keystore-${profile}.p12`, p12);
      const info = execFileSync('openssl', ['pkcs12', '-in', path, '-info', '-noout', '-passin', `pass:${PASSWORD}`]);
      void info;
      const stderr = spawnSync('openssl', ['pkcs12', '-in', path, '-info', '-noout', '-passin', `pass:${PASSWORD}`], { encoding: 'utf8' }).stderr;
      expect(stderr).toMatch(profile === 'Modern2023' ? /MAC: sha256/ : /MAC: sha1/);
      expect(stderr).toMatch(profile === 'Modern2023' ? /PBES2, PBKDF2, AES-256-CBC/ : /pbeWithSHA1And3-KeyTripleDES-CBC/);
      const certs = execFileSync('openssl', ['pkcs12', '-in', path, '-nokeys', '-passin', `pass:${PASSWORD}`], { encoding: 'utf8' });
      // The chain the issuer returned (leaf, intermediate, root), the CA not repeated.
      expect(c.chain.map((x) => (x.subject ?? '').trim())).toEqual(['', 'CN=keystore intermediate', 'CN=keystore root']);
      expect(splitPem(certs).map((p) => new X509Certificate(p).fingerprint256)).toEqual(c.chain.map((x) => x.fingerprint256));
      const key = execFileSync('openssl', ['pkcs12', '-in', path, '-nocerts', '-nodes', '-passin', `pass:${PASSWORD}`], { encoding: 'utf8' });
      expect(key).toContain(c.key.export({ type: 'pkcs8', format: 'pem' }).toString().trim());
      // A wrong password is refused (the MAC does not verify).
      expect(spawnSync('openssl', ['pkcs12', '-in', path, '-noout', '-passin', 'pass:wrong']).status).not.toBe(0);
      // Node's TLS stack (OpenSSL underneath) takes it as a server identity.
      expect(() => createSecureContext({ pfx: p12, passphrase: PASSWORD })).not.toThrow();
    },
  );

  it.each<Pkcs12Profile>(['LegacyDES', 'Modern2023'])('PKCS#12, %s, with a non-ASCII password: OpenSSL and Node open it', (profile) => {
    const p12 = encodePkcs12Keystore({ key: c.key, chain: c.chain, password: UNICODE_PASSWORD, profile });
    const path = file(`unicode-${profile}.p12`, p12);
    expect(tool('openssl', ['pkcs12', '-in', path, '-nokeys', '-passin', `pass:${UNICODE_PASSWORD}`])).toContain('BEGIN CERTIFICATE');
    expect(() => createSecureContext({ pfx: p12, passphrase: UNICODE_PASSWORD })).not.toThrow();
  });

  it('PKCS#12 truststore: the CA, trusted, and no key', () => {
    const path = file('truststore.p12', encodePkcs12Truststore({ ca: [c.ca], password: PASSWORD, profile: 'Modern2023' }));
    const certs = execFileSync('openssl', ['pkcs12', '-in', path, '-nokeys', '-passin', `pass:${PASSWORD}`], { encoding: 'utf8' });
    expect(splitPem(certs).map((p) => new X509Certificate(p).fingerprint256)).toEqual([c.ca.fingerprint256]);
    if (has('keytool')) {
      const list = tool('keytool', ['-list', '-keystore', path, '-storetype', 'PKCS12', '-storepass', PASSWORD]);
      expect(list).toMatch(/Your keystore contains 1 entry/);
      expect(list).toMatch(/trustedCertEntry/);
    }
  });

  it.runIf(has('keytool'))('PKCS#12 keystore, Modern2023: Java reads the key entry with its chain', () => {
    const path = file('java.p12', encodePkcs12Keystore({ key: c.key, chain: c.chain, ca: [c.ca], password: PASSWORD, profile: 'Modern2023' }));
    const list = tool('keytool', ['-list', '-v', '-keystore', path, '-storetype', 'PKCS12', '-storepass', PASSWORD]);
    expect(list).toMatch(/PrivateKeyEntry/);
    expect(list).toMatch(/Certificate chain length: 3/);
  });

  it.runIf(has('keytool'))(
    'JKS keystore and truststore: keytool verifies the integrity hash and lists the entries; the key is recovered with the password',
    () => {
      const created = new Date('2026-11-23T12:00:00Z');
      const ks = file('keystore.jks', encodeJksKeystore({ key: c.key, chain: c.chain, ca: c.ca, password: PASSWORD, created }));
      const list = tool('keytool', ['-list', '-v', '-keystore', ks, '-storetype', 'JKS', '-storepass', PASSWORD]);
      expect(list).toMatch(/Your keystore contains 2 entries/);
      expect(list).toMatch(/Alias name: certificate[\s\S]*Entry type: PrivateKeyEntry[\s\S]*Certificate chain length: 3/);
      expect(list).toMatch(/Alias name: ca[\s\S]*Entry type: trustedCertEntry/);
      // keytool must decrypt the key to convert it: the key protector and the key are right.
      const out = join(dir, 'converted.p12');
      tool('keytool', [
        '-importkeystore',
        '-srckeystore',
        ks,
        '-srcstoretype',
        'JKS',
        '-srcstorepass',
        PASSWORD,
        '-destkeystore',
        out,
        '-deststoretype',
        'PKCS12',
        '-deststorepass',
        PASSWORD,
        '-srcalias',
        'certificate',
        '-noprompt',
      ]);
      const key = execFileSync('openssl', ['pkcs12', '-in', out, '-nocerts', '-nodes', '-passin', `pass:${PASSWORD}`], { encoding: 'utf8' });
      expect(key).toContain(c.key.export({ type: 'pkcs8', format: 'pem' }).toString().trim());
      // A wrong store password fails the integrity check.
      expect(spawnSync('keytool', ['-list', '-keystore', ks, '-storetype', 'JKS', '-storepass', 'wrong-password']).status).not.toBe(0);

      const ts = file('truststore.jks', encodeJksTruststore({ ca: c.ca, password: PASSWORD, created }));
      expect(tool('keytool', ['-list', '-keystore', ts, '-storetype', 'JKS', '-storepass', PASSWORD])).toMatch(/ca, .*trustedCertEntry/);
    },
  );
});
