import { constants, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { children, decodeOid, DerError, readTlv, type Tlv } from './der.js';
import { SIGNATURE_HASH, type RawExtension } from './x509-write.js';

/**
 * CSRs and certificates read as DER by hand: only the parts the operator uses, every length
 * checked (der.ts), the CSR's signature checked by Node's crypto. A CSR is a tenant's bytes; a
 * certificate may be anyone's (a Secret someone else wrote). Each gives its parts or a DerError.
 */

/**
 * The DER of the first PEM block (with one of the labels, when given); DerError when there is none
 * or it is not base64. A CSR's label is not checked, as cert-manager (Go's pem.Decode) does not.
 */
export function pemBlock(text: string, labels?: readonly string[]): Buffer {
  const m = /-----BEGIN ([A-Z0-9 ]+)-----([^-]*)-----END \1-----/.exec(text);
  if (!m || (labels && !labels.includes(m[1]!))) throw new DerError(labels ? `no PEM block labelled ${labels.join(' or ')}` : 'no PEM block');
  const body = m[2]!.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(body) || body.length % 4) throw new DerError('a PEM body that is not base64');
  return Buffer.from(body, 'base64');
}

const expect = (t: Tlv | undefined, tag: number, what: string): Tlv => {
  if (t?.tag !== tag) throw new DerError(`${what} missing or of the wrong type`);
  return t;
};

/** A whole DER value, nothing after it. */
function whole(der: Buffer, what: string): Tlv {
  const t = expect(readTlv(der), 0x30, what);
  if (t.next !== der.length) throw new DerError(`${der.length - t.next} bytes after the ${what}`);
  return t;
}

/** Extensions ::= SEQUENCE OF Extension, each { extnID, critical BOOLEAN DEFAULT FALSE, extnValue OCTET STRING }. */
function extensionsOf(seq: Tlv): RawExtension[] {
  return children(expect(seq, 0x30, 'the extensions').content).map((e) => {
    const parts = children(expect(e, 0x30, 'an extension').content);
    const id = expect(parts[0], 0x06, "an extension's id");
    const critical = parts.length === 3 && parts[1]!.tag === 0x01 && parts[1]!.content[0] !== 0;
    const value = expect(parts[parts.length - 1], 0x04, "an extension's value");
    if (parts.length > 3 || (parts.length === 3 && parts[1]!.tag !== 0x01)) throw new DerError('an extension with unexpected parts');
    return { type: decodeOid(id.content), critical, value: value.content, rawData: e.raw };
  });
}

/** A signature algorithm the operator does not check (SHA-1, DSA, …): the signer's to change. */
export class UnsupportedSignature extends Error {}

/** What a signature algorithm identifier asks Node's verify for. */
function verifierOf(alg: Tlv): { hash: string | null; options: { padding?: number; saltLength?: number } } {
  const [id, params] = children(expect(alg, 0x30, 'the signature algorithm').content);
  const o = decodeOid(expect(id, 0x06, 'the signature algorithm id').content);
  if (SIGNATURE_HASH.has(o)) return { hash: SIGNATURE_HASH.get(o)!, options: {} };
  if (o === '1.2.840.113549.1.1.10') {
    // RSASSA-PSS: RSASSA-PSS-params { [0] hashAlgorithm, [1] maskGenAlgorithm, [2] saltLength, [3] trailerField }
    const hashes: Record<string, string> = { '2.16.840.1.101.3.4.2.1': 'sha256', '2.16.840.1.101.3.4.2.2': 'sha384', '2.16.840.1.101.3.4.2.3': 'sha512' };
    let hash: string | undefined;
    let saltLength = 20;
    for (const p of children(expect(params, 0x30, 'the RSASSA-PSS parameters').content)) {
      if (p.tag === 0xa0)
        hash = hashes[decodeOid(expect(children(expect(readTlv(p.content), 0x30, 'the PSS hash').content)[0], 0x06, 'the PSS hash id').content)];
      if (p.tag === 0xa2) {
        const n = expect(readTlv(p.content), 0x02, 'the PSS salt length').content;
        if (!n.length || n.length > 4) throw new DerError('a PSS salt length out of range');
        saltLength = n.readUIntBE(0, n.length);
      }
    }
    if (!hash) throw new UnsupportedSignature('RSASSA-PSS is checked with SHA-256, SHA-384 or SHA-512 only');
    return { hash, options: { padding: constants.RSA_PKCS1_PSS_PADDING, saltLength } };
  }
  throw new UnsupportedSignature(`the signature algorithm ${o} is not one this operator checks (ECDSA, RSA or RSASSA-PSS with SHA-256 or wider, Ed25519)`);
}

export interface CsrParts {
  /** The subject Name as encoded. */
  subject: Buffer;
  /** SubjectPublicKeyInfo DER, and the key itself. */
  spki: Buffer;
  publicKey: KeyObject;
  /** The extensionRequest attribute's extensions (none when it has none). */
  extensions: RawExtension[];
  /** Whether the self-signature holds, or why it was not checked. */
  signature: 'valid' | 'invalid' | UnsupportedSignature;
}

const EXTENSION_REQUEST = '1.2.840.113549.1.9.14';

/** A PKCS#10 request's parts (RFC 2986), its signature checked. */
export function readCsr(der: Buffer): CsrParts {
  const [info, alg, sig, extra] = children(whole(der, 'certification request').content);
  if (extra) throw new DerError('a certification request with more than three parts');
  const [version, subject, spki, attributes, more] = children(expect(info, 0x30, 'the request info').content);
  if (more) throw new DerError('request info with more than four parts');
  if (expect(version, 0x02, 'the version').content.length !== 1 || version!.content[0] !== 0) throw new DerError('a request version other than 1');
  expect(subject, 0x30, 'the subject');
  expect(spki, 0x30, 'the subject public key');
  let extensions: RawExtension[] = [];
  for (const a of children(expect(attributes, 0xa0, 'the attributes').content)) {
    const [type, values] = children(expect(a, 0x30, 'an attribute').content);
    if (decodeOid(expect(type, 0x06, "an attribute's type").content) !== EXTENSION_REQUEST) continue;
    const [first] = children(expect(values, 0x31, "an attribute's values").content);
    extensions = extensionsOf(expect(first, 0x30, 'the requested extensions'));
  }
  let publicKey: KeyObject;
  try {
    publicKey = createPublicKey({ key: spki!.raw, format: 'der', type: 'spki' });
  } catch (err) {
    throw new DerError(`a subject public key that does not parse: ${(err as Error).message}`);
  }
  const bits = expect(sig, 0x03, 'the signature');
  if (bits.content[0] !== 0) throw new DerError('a signature with unused bits');
  const v = verifierOf(alg!);
  let signature: CsrParts['signature'];
  try {
    signature = verify(v.hash, info!.raw, { key: publicKey, dsaEncoding: 'der', ...v.options }, bits.content.subarray(1)) ? 'valid' : 'invalid';
  } catch {
    // The key does not fit the algorithm (an EC key under an RSA signature): not a valid signature.
    signature = 'invalid';
  }
  return { subject: subject!.raw, spki: spki!.raw, publicKey, extensions, signature };
}

export interface CertificateParts {
  issuer: Buffer;
  subject: Buffer;
  spki: Buffer;
  extensions: RawExtension[];
}

/** The parts of an X.509 certificate's TBSCertificate (RFC 5280 §4.1) the operator reads. */
export function readCertificate(der: Buffer): CertificateParts {
  const [tbs] = children(whole(der, 'certificate').content);
  const parts = children(expect(tbs, 0x30, 'the TBSCertificate').content);
  // version [0] EXPLICIT is absent in a v1 certificate.
  const at = parts[0]?.tag === 0xa0 ? 1 : 0;
  const issuer = expect(parts[at + 2], 0x30, 'the issuer');
  const subject = expect(parts[at + 4], 0x30, 'the subject');
  const spki = expect(parts[at + 5], 0x30, 'the subject public key');
  // issuerUniqueID [1] and subjectUniqueID [2] may come before extensions [3].
  const ext = parts.slice(at + 6).find((p) => p.tag === 0xa3);
  return { issuer: issuer.raw, subject: subject.raw, spki: spki.raw, extensions: ext ? extensionsOf(readTlv(ext.content)) : [] };
}
