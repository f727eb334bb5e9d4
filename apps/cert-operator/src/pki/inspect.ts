import { X509Certificate, type KeyObject } from 'node:crypto';
import type { Identity } from './csr.js';
import { publicKeyDer } from './keys.js';
import { textMemo } from './parse-memo.js';
import { x509 } from './crypto-provider.js';
import { subjectAltNamesOf } from './general-names.js';
import { readCertificate } from './x509-read.js';

/** PEM blocks of a chain, leaf first. */
export const splitPem = (pem: string): string[] => pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];

export interface CertificateInfo extends Identity {
  x509: X509Certificate;
  notBefore: Date;
  notAfter: Date;
  isCA: boolean;
  publicKeyDer: Buffer;
  /** The subject as encoded (compared whole for literalSubject). */
  subjectName: x509.Name;
}

/**
 * The leaf of a PEM chain, as facts the controller compares against the spec: read once for the
 * 1,024 chains read last (a Certificate's Secret is read at each of its reconciles). Shared and
 * frozen.
 */
export const inspectCertificate = textMemo(1_024, 65_536, (pem: string): CertificateInfo => Object.freeze(inspect(pem)));

/** A certificate of a chain's PEM, parsed by Node once for the 256 read last (a CA's, each time it signs). */
export const parseX509 = textMemo(256, 65_536, (pem: string) => new X509Certificate(pem));

function inspect(pem: string): CertificateInfo {
  const [leaf] = splitPem(pem);
  if (!leaf) throw new Error('no PEM certificate found');
  const c = parseX509(leaf);
  // Read once more, by hand, for what Node does not decode: the SANs' extension and the subject as
  // encoded.
  const parts = readCertificate(c.raw);
  const subject = new x509.Name(parts.subject);
  return {
    x509: c,
    notBefore: new Date(c.validFrom),
    notAfter: new Date(c.validTo),
    isCA: c.ca,
    publicKeyDer: publicKeyDer(c.publicKey),
    subjectName: subject,
    // From the encoded name: Node's subject string escapes commas and pluses, and writes a
    // multi-valued attribute on one line, so a common name with a comma never matched its spec.
    commonName: subject.getField('2.5.4.3')[0],
    organizations: subject.getField('2.5.4.10'),
    ...subjectAltNamesOf(parts.extensions),
  };
}

export const certificateMatchesKey = (pem: string, key: KeyObject): boolean => {
  try {
    const [first] = splitPem(pem);
    return !!first && parseX509(first).checkPrivateKey(key);
  } catch {
    return false;
  }
};
