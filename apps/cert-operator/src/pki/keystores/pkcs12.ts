import { createCipheriv, createHash, createHmac, pbkdf2Sync, randomBytes, type KeyObject, X509Certificate } from 'node:crypto';
import { bmpString, explicit, implicitPrimitive, integer, nul, octets, oid, sequence, set } from '../der.js';
import { bmpPassword, pkcs12Kdf } from './pkcs12-kdf.js';

/**
 * cert-manager's PKCS#12 profiles. LegacyDES: 3DES bags and a SHA-1 MAC, what every reader opens.
 * Modern2023: PBES2 (PBKDF2-HMAC-SHA-256, AES-256-CBC) and a SHA-256 MAC, as OpenSSL 3 and Java 20
 * write by default. (LegacyRC2, cert-manager's default, is refused by OpenSSL 3 without its legacy
 * provider; see docs/cert-operator.md.)
 */
export type Pkcs12Profile = 'LegacyDES' | 'Modern2023';

const OID = {
  data: '1.2.840.113549.1.7.1',
  encryptedData: '1.2.840.113549.1.7.6',
  shroudedKeyBag: '1.2.840.113549.1.12.10.1.2',
  certBag: '1.2.840.113549.1.12.10.1.3',
  x509Certificate: '1.2.840.113549.1.9.22.1',
  localKeyId: '1.2.840.113549.1.9.21',
  friendlyName: '1.2.840.113549.1.9.20',
  pbeSha3Des: '1.2.840.113549.1.12.1.3',
  pbes2: '1.2.840.113549.1.5.13',
  pbkdf2: '1.2.840.113549.1.5.12',
  hmacSha256: '1.2.840.113549.2.9',
  aes256Cbc: '2.16.840.1.101.3.4.1.42',
  sha1: '1.3.14.3.2.26',
  sha256: '2.16.840.1.101.3.4.2.1',
  // Java reads a certificate without a key as a trusted entry only with this attribute.
  javaTrustedKeyUsage: '2.16.840.1.113894.746875.1.1',
  anyExtendedKeyUsage: '2.5.29.37.0',
};

const ITERATIONS = 2048;

const attribute = (type: string, ...values: Buffer[]) => sequence(oid(type), set(...values));

/** Encrypts with the profile's scheme; returns the AlgorithmIdentifier and the ciphertext. */
function encrypt(profile: Pkcs12Profile, password: string, plain: Buffer): { algorithm: Buffer; data: Buffer } {
  const salt = randomBytes(profile === 'Modern2023' ? 16 : 8);
  if (profile === 'Modern2023') {
    const iv = randomBytes(16);
    const key = pbkdf2Sync(Buffer.from(password, 'utf8'), salt, ITERATIONS, 32, 'sha256');
    const c = createCipheriv('aes-256-cbc', key, iv);
    const algorithm = sequence(
      oid(OID.pbes2),
      sequence(
        sequence(oid(OID.pbkdf2), sequence(octets(salt), integer(ITERATIONS), sequence(oid(OID.hmacSha256), nul()))),
        sequence(oid(OID.aes256Cbc), octets(iv)),
      ),
    );
    return { algorithm, data: Buffer.concat([c.update(plain), c.final()]) };
  }
  const pw = bmpPassword(password);
  const key = pkcs12Kdf('sha1', pw, salt, 1, ITERATIONS, 24);
  const iv = pkcs12Kdf('sha1', pw, salt, 2, ITERATIONS, 8);
  const c = createCipheriv('des-ede3-cbc', key, iv);
  return { algorithm: sequence(oid(OID.pbeSha3Des), sequence(octets(salt), integer(ITERATIONS))), data: Buffer.concat([c.update(plain), c.final()]) };
}

const certBag = (der: Buffer, attributes: Buffer[]) =>
  sequence(oid(OID.certBag), explicit(0, sequence(oid(OID.x509Certificate), explicit(0, octets(der)))), ...(attributes.length ? [set(...attributes)] : []));

const dataContent = (content: Buffer) => sequence(oid(OID.data), explicit(0, octets(content)));

function encryptedContent(profile: Pkcs12Profile, password: string, content: Buffer) {
  const { algorithm, data } = encrypt(profile, password, content);
  return sequence(oid(OID.encryptedData), explicit(0, sequence(integer(0), sequence(oid(OID.data), algorithm, implicitPrimitive(0, data)))));
}

/** The PFX around an AuthenticatedSafe, with its MAC. */
function pfx(profile: Pkcs12Profile, password: string, contents: Buffer[]): Buffer {
  const authSafe = sequence(...contents);
  const hash = profile === 'Modern2023' ? 'sha256' : 'sha1';
  const macSalt = randomBytes(profile === 'Modern2023' ? 16 : 8);
  const macKey = pkcs12Kdf(hash, bmpPassword(password), macSalt, 3, ITERATIONS, hash === 'sha256' ? 32 : 20);
  const digest = createHmac(hash, macKey).update(authSafe).digest();
  const macData = sequence(sequence(sequence(oid(hash === 'sha256' ? OID.sha256 : OID.sha1), nul()), octets(digest)), octets(macSalt), integer(ITERATIONS));
  return sequence(integer(3), dataContent(authSafe), macData);
}

/**
 * keystore.p12: the private key and the certificate chain (leaf first, then intermediates, then
 * the CA when known), as cert-manager writes it. The key and the leaf share a localKeyId.
 */
export function encodePkcs12Keystore(o: {
  key: KeyObject;
  chain: X509Certificate[];
  ca?: X509Certificate[];
  password: string;
  profile: Pkcs12Profile;
}): Buffer {
  const [leaf, ...rest] = o.chain;
  if (!leaf) throw new Error('a PKCS#12 keystore needs the certificate: the chain is empty');
  const keyId = createHash('sha1').update(leaf.raw).digest();
  const idAttr = attribute(OID.localKeyId, octets(keyId));
  const seen = new Set([leaf.fingerprint256]);
  const others = [...rest, ...(o.ca ?? [])].filter((c) => !seen.has(c.fingerprint256) && seen.add(c.fingerprint256));
  const certs = sequence(certBag(leaf.raw, [idAttr]), ...others.map((c) => certBag(c.raw, [])));
  const pkcs8 = o.key.export({ type: 'pkcs8', format: 'der' });
  const { algorithm, data } = encrypt(o.profile, o.password, pkcs8);
  const keyBag = sequence(oid(OID.shroudedKeyBag), explicit(0, sequence(algorithm, octets(data))), set(idAttr));
  return pfx(o.profile, o.password, [encryptedContent(o.profile, o.password, certs), dataContent(sequence(keyBag))]);
}

/** truststore.p12: the CA certificates as trusted entries (Java's trusted-key-usage attribute set), no key. */
export function encodePkcs12Truststore(o: { ca: X509Certificate[]; password: string; profile: Pkcs12Profile }): Buffer {
  const trusted = attribute(OID.javaTrustedKeyUsage, oid(OID.anyExtendedKeyUsage));
  const bags = o.ca.map((c, i) => certBag(c.raw, [trusted, attribute(OID.friendlyName, bmpString(i ? `ca-${i}` : 'ca'))]));
  return pfx(o.profile, o.password, [encryptedContent(o.profile, o.password, sequence(...bags))]);
}
