import { createHash, sign, type KeyObject } from 'node:crypto';
import { bitString, boolean, children, DerError, explicit, integer, nul, octets, oid, readTlv, sequence, set, time, tlv, unsignedInteger } from './der.js';
import { describeKey, publicKeyDer } from './keys.js';

/**
 * CSRs and certificates written as DER by hand and signed by Node's crypto. The x509 library built
 * them over WebCrypto and asn1js at about 4 ms each (a fifth of the operator's CPU per CA
 * certificate, bench/README.md); the framing below is a few buffer copies, and the signature is
 * one OpenSSL call. Names and extensions arrive already encoded: the subject as the CSR carries it,
 * the issuer as the CA certificate carries it.
 */

/** An extension as encoded: its OID, criticality, value (the OCTET STRING's content) and whole DER. */
export interface RawExtension {
  type: string;
  critical: boolean;
  value: Buffer;
  rawData: Buffer;
}

/** Extension ::= SEQUENCE { extnID, critical BOOLEAN DEFAULT FALSE, extnValue OCTET STRING } */
export function extension(type: string, critical: boolean, value: Buffer): RawExtension {
  return { type, critical, value, rawData: sequence(oid(type), ...(critical ? [boolean(true)] : []), octets(value)) };
}

/** An extension the x509 library built (the rarer ones: CRL distribution points, authority info access). */
export const fromLibrary = (e: { type: string; critical: boolean; value: ArrayBuffer; rawData: ArrayBuffer }): RawExtension => ({
  type: e.type,
  critical: e.critical,
  value: Buffer.from(e.value),
  rawData: Buffer.from(e.rawData),
});

/** basicConstraints (critical): cA TRUE for a CA, the empty SEQUENCE (cA's default, FALSE) otherwise. */
export const basicConstraints = (isCA: boolean): RawExtension => extension('2.5.29.19', true, sequence(...(isCA ? [boolean(true)] : [])));

/** subjectKeyIdentifier of a SubjectPublicKeyInfo (method 1). */
export const subjectKeyIdentifier = (spki: Buffer): RawExtension => extension('2.5.29.14', false, octets(keyIdentifier(spki)));

/** authorityKeyIdentifier: SEQUENCE { keyIdentifier [0] IMPLICIT }, the issuer's subject key id. */
export const authorityKeyIdentifier = (keyId: Buffer): RawExtension => extension('2.5.29.35', false, sequence(tlv(0x80, keyId)));

/**
 * The signature algorithms written and checked without parameters, by OID: the hash each signs
 * with (none for Ed25519). RSASSA-PSS, which carries its hash in parameters, is read only.
 */
export const SIGNATURE_HASH: ReadonlyMap<string, string | null> = new Map([
  ['1.2.840.10045.4.3.2', 'sha256'],
  ['1.2.840.10045.4.3.3', 'sha384'],
  ['1.2.840.10045.4.3.4', 'sha512'],
  ['1.2.840.113549.1.1.11', 'sha256'],
  ['1.2.840.113549.1.1.12', 'sha384'],
  ['1.2.840.113549.1.1.13', 'sha512'],
  ['1.3.101.112', null],
]);

/** The signature algorithm for a key: SHA-256 for RSA and P-256, wider hashes for bigger curves. */
function algorithmOf(key: KeyObject): { der: Buffer; hash: string | null } {
  const d = describeKey(key);
  const o =
    d.algorithm === 'RSA'
      ? '1.2.840.113549.1.1.11'
      : d.algorithm === 'Ed25519'
        ? '1.3.101.112'
        : (({ 256: '1.2.840.10045.4.3.2', 384: '1.2.840.10045.4.3.3' } as Record<number, string>)[d.size] ?? '1.2.840.10045.4.3.4');
  // RSA's AlgorithmIdentifier carries an explicit NULL; ECDSA's and Ed25519's carry nothing.
  return { der: sequence(oid(o), ...(d.algorithm === 'RSA' ? [nul()] : [])), hash: SIGNATURE_HASH.get(o)! };
}

/** SEQUENCE { toBeSigned, signatureAlgorithm, signature BIT STRING }, ECDSA signatures in DER. */
function signed(toBeSigned: (algorithm: Buffer) => Buffer, key: KeyObject): Buffer {
  const alg = algorithmOf(key);
  const tbs = toBeSigned(alg.der);
  return sequence(tbs, alg.der, bitString(sign(alg.hash, tbs, { key, dsaEncoding: 'der' })));
}

export const pem = (label: string, der: Buffer): string =>
  `-----BEGIN ${label}-----\n${der.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '')}\n-----END ${label}-----`;

const EXTENSION_REQUEST = '1.2.840.113549.1.9.14';

/** A PKCS#10 request (RFC 2986) for a subject (an encoded Name) and extensions, signed by the key: PEM. */
export function writeCsr(subject: Buffer, extensions: RawExtension[], key: KeyObject): string {
  const spki = publicKeyDer(key);
  const attributes = extensions.length ? [sequence(oid(EXTENSION_REQUEST), set(sequence(...extensions.map((e) => e.rawData))))] : [];
  const der = signed(() => sequence(integer(0), subject, spki, tlv(0xa0, Buffer.concat(attributes))), key);
  return pem('CERTIFICATE REQUEST', der);
}

export interface TbsFields {
  serial: Buffer;
  issuer: Buffer;
  subject: Buffer;
  notBefore: Date;
  notAfter: Date;
  /** The subject's public key as SubjectPublicKeyInfo DER. */
  spki: Buffer;
  extensions: RawExtension[];
}

/** An X.509 v3 certificate (RFC 5280 §4.1) signed by the issuer's key: PEM. */
export function writeCertificate(f: TbsFields, issuerKey: KeyObject): string {
  const der = signed(
    (alg) =>
      sequence(
        explicit(0, integer(2)),
        unsignedInteger(f.serial),
        alg,
        f.issuer,
        sequence(time(f.notBefore), time(f.notAfter)),
        f.subject,
        f.spki,
        ...(f.extensions.length ? [explicit(3, sequence(...f.extensions.map((e) => e.rawData)))] : []),
      ),
    issuerKey,
  );
  return pem('CERTIFICATE', der);
}

/**
 * The key identifier of a public key (RFC 5280 §4.2.1.2, method 1): SHA-1 of the subjectPublicKey
 * BIT STRING's bits.
 */
export function keyIdentifier(spki: Buffer): Buffer {
  // SubjectPublicKeyInfo ::= SEQUENCE { algorithm, subjectPublicKey BIT STRING }
  const bits = children(readTlv(spki).content)[1];
  if (bits?.tag !== 0x03) throw new DerError('a SubjectPublicKeyInfo without its key');
  return createHash('sha1').update(bits.content.subarray(1)).digest();
}
