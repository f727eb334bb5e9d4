import { createHash, randomBytes, type KeyObject, type X509Certificate } from 'node:crypto';
import { octets, oid, sequence, nul, utf16be } from '../der.js';

/**
 * Java KeyStore (JKS) files, as cert-manager writes them: a private-key entry (alias "certificate"
 * by default) with the certificate chain, and the CA as a trusted-certificate entry "ca" when known.
 *
 * JKS is Sun's own format: big-endian, entries then a SHA-1 over the password (UTF-16BE), the
 * words "Mighty Aphrodite" and everything before it. A key is protected by Sun's key protector: a
 * SHA-1 keystream from the password and a random salt, XORed over the PKCS#8 bytes, then a SHA-1
 * check of the plaintext. Weak by today's standards, which is why Java moved to PKCS#12; it is
 * still what many Java applications read.
 */

const MAGIC = 0xfeedfeed;
const VERSION = 2;
const PRIVATE_KEY = 1;
const TRUSTED_CERT = 2;
const KEY_PROTECTOR_OID = '1.3.6.1.4.1.42.2.17.1.1';

const u16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
};
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};
const u64 = (n: number) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
};
/** A keystore that cannot be written as asked (an alias Java cannot store). */
export class KeystoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeystoreError';
  }
}

/** Java's DataOutput.writeUTF: a two-byte length, then (modified) UTF-8; plain UTF-8 for the ASCII aliases used here. */
const utf = (s: string) => {
  const b = Buffer.from(s, 'utf8');
  if (b.length > 0xffff) throw new KeystoreError(`the alias is ${b.length} bytes long: a JKS alias holds at most 65,535`);
  return Buffer.concat([u16(b.length), b]);
};
const certificate = (c: X509Certificate) => Buffer.concat([utf('X.509'), u32(c.raw.length), c.raw]);

function protectKey(pkcs8: Buffer, password: string): Buffer {
  const pw = utf16be(password);
  const salt = randomBytes(20);
  const stream: Buffer[] = [];
  let digest = salt;
  for (let n = 0; n < pkcs8.length; n += 20) {
    digest = createHash('sha1').update(pw).update(digest).digest();
    stream.push(digest);
  }
  const keystream = Buffer.concat(stream);
  const xored = Buffer.alloc(pkcs8.length);
  for (let i = 0; i < pkcs8.length; i++) xored[i] = pkcs8[i]! ^ keystream[i]!;
  const check = createHash('sha1').update(pw).update(pkcs8).digest();
  // EncryptedPrivateKeyInfo naming the key protector.
  return sequence(sequence(oid(KEY_PROTECTOR_OID), nul()), octets(Buffer.concat([salt, xored, check])));
}

export interface JksEntry {
  alias: string;
  created: Date;
  key?: KeyObject;
  chain: X509Certificate[];
}

function store(entries: Buffer[], password: string): Buffer {
  const body = Buffer.concat([u32(MAGIC), u32(VERSION), u32(entries.length), ...entries]);
  const mac = createHash('sha1').update(utf16be(password)).update('Mighty Aphrodite', 'utf8').update(body).digest();
  return Buffer.concat([body, mac]);
}

const keyEntry = (alias: string, created: Date, key: KeyObject, chain: X509Certificate[], password: string) => {
  const protectedKey = protectKey(key.export({ type: 'pkcs8', format: 'der' }), password);
  return Buffer.concat([
    u32(PRIVATE_KEY),
    utf(alias),
    u64(created.getTime()),
    u32(protectedKey.length),
    protectedKey,
    u32(chain.length),
    ...chain.map(certificate),
  ]);
};
const trustedEntry = (alias: string, created: Date, cert: X509Certificate) =>
  Buffer.concat([u32(TRUSTED_CERT), utf(alias), u64(created.getTime()), certificate(cert)]);

/** keystore.jks: the key with its chain under `alias`, and the CA (when known) as "ca". */
export function encodeJksKeystore(o: {
  key: KeyObject;
  chain: X509Certificate[];
  ca?: X509Certificate;
  password: string;
  alias?: string;
  created: Date;
}): Buffer {
  const entries = [keyEntry(o.alias ?? 'certificate', o.created, o.key, o.chain, o.password)];
  if (o.ca) entries.push(trustedEntry('ca', o.created, o.ca));
  return store(entries, o.password);
}

/** truststore.jks: the CA as the trusted entry "ca". */
export function encodeJksTruststore(o: { ca: X509Certificate; password: string; created: Date }): Buffer {
  return store([trustedEntry('ca', o.created, o.ca)], o.password);
}
