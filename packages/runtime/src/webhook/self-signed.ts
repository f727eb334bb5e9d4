import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import { bitString, boolean, explicit, implicit, integer, octetString, oid, sequence, set, time, unsignedInteger, utf8String } from './der.js';

/** A certificate and its private key, both PEM. */
export interface KeyPair {
  cert: string;
  key: string;
}

const ECDSA_WITH_SHA256 = sequence(oid('1.2.840.10045.4.3.2'));
const name = (cn: string) => sequence(set(sequence(oid('2.5.4.3'), utf8String(cn))));
const extension = (id: string, critical: boolean, value: Buffer) => sequence(oid(id), ...(critical ? [boolean(true)] : []), octetString(value));
const keyId = (spki: Buffer) => createHash('sha1').update(spki).digest();

/** An IPv6 address as its eight 16-bit groups, "::" expanded (hex, as written). */
export function ipv6Groups(ip: string): string[] {
  const [head, tail] = ip.includes('::') ? ip.split('::') : [ip, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  return tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
}

/** The certificates of a PEM bundle, each a whole PEM block, in order. */
export const pemCertificates = (bundle: string): string[] => bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];

function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map(Number));
  return Buffer.concat(ipv6Groups(ip).map((g) => Buffer.from(g.padStart(4, '0'), 'hex')));
}

interface Subject {
  commonName: string;
  /** DNS names and IP addresses, for a serving certificate. */
  hosts?: string[];
  notBefore: number;
  notAfter: number;
  isCa: boolean;
}

function certificate(subject: Subject, publicKey: KeyObject, issuer: { name: string; key: KeyObject; keyId: Buffer }): string {
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  // 16 random bytes, positive and without a leading zero byte (RFC 5280 4.1.2.2: at most 20 octets).
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x40;
  const extensions = [
    extension('2.5.29.19', true, subject.isCa ? sequence(boolean(true)) : sequence()),
    // keyCertSign and cRLSign (bits 5, 6) for a CA; digitalSignature (bit 0) for an ECDSA server.
    extension('2.5.29.15', true, subject.isCa ? bitString(Buffer.from([0x06]), 1) : bitString(Buffer.from([0x80]), 7)),
    extension('2.5.29.14', false, octetString(keyId(spki))),
    extension('2.5.29.35', false, sequence(implicit(0, issuer.keyId))),
  ];
  if (!subject.isCa) {
    extensions.push(extension('2.5.29.37', false, sequence(oid('1.3.6.1.5.5.7.3.1'))));
    const names = (subject.hosts ?? []).map((h) => (isIP(h) ? implicit(7, ipBytes(h)) : implicit(2, Buffer.from(h, 'ascii'))));
    if (names.length) extensions.push(extension('2.5.29.17', false, sequence(...names)));
  }
  const tbs = sequence(
    explicit(0, integer(2)),
    unsignedInteger(serial),
    ECDSA_WITH_SHA256,
    name(issuer.name),
    sequence(time(subject.notBefore), time(subject.notAfter)),
    name(subject.commonName),
    spki,
    explicit(3, sequence(...extensions)),
  );
  const signature = sign('sha256', tbs, issuer.key);
  const der = sequence(tbs, ECDSA_WITH_SHA256, bitString(signature));
  return `-----BEGIN CERTIFICATE-----\n${der.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n?$/, '\n')}-----END CERTIFICATE-----\n`;
}

const newKey = () => generateKeyPairSync('ec', { namedCurve: 'P-256' });
const pem = (k: KeyObject) => k.export({ type: 'pkcs8', format: 'pem' }) as string;

/** A self-signed CA (ECDSA P-256). */
export function issueCa(commonName: string, notBefore: number, notAfter: number): KeyPair {
  const { publicKey, privateKey } = newKey();
  const id = keyId(publicKey.export({ type: 'spki', format: 'der' }));
  return {
    cert: certificate({ commonName, notBefore, notAfter, isCa: true }, publicKey, { name: commonName, key: privateKey, keyId: id }),
    key: pem(privateKey),
  };
}

/** A serving certificate for `hosts` (DNS names or IPs), signed by `ca`. */
export function issueServing(ca: KeyPair, hosts: string[], notBefore: number, notAfter: number): KeyPair {
  const caCert = new X509Certificate(ca.cert);
  const caKey = createPrivateKey(ca.key);
  const id = keyId(createPublicKey(caKey).export({ type: 'spki', format: 'der' }));
  const { publicKey, privateKey } = newKey();
  // The issuer must be the CA's subject, byte for byte in meaning: the CA is always ours, one CN.
  const issuerName = caCert.subject.replace(/^CN=/, '');
  const cert = certificate({ commonName: hosts[0] ?? 'opkit', hosts, notBefore, notAfter, isCa: false }, publicKey, {
    name: issuerName,
    key: caKey,
    keyId: id,
  });
  return { cert, key: pem(privateKey) };
}
