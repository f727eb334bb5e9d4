import { X509Certificate, type KeyObject } from 'node:crypto';
import type { Identity } from './csr.js';
import { publicKeyDer } from './keys.js';
import { x509 } from './crypto-provider.js';
import { OID_SAN, sanNames } from './general-names.js';

/** PEM blocks of a chain, leaf first. */
export const splitPem = (pem: string): string[] => pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];

export interface CertificateInfo extends Identity {
  x509: X509Certificate;
  notBefore: Date;
  notAfter: Date;
  isCA: boolean;
  publicKeyDer: Buffer;
}

/** The certificate's Subject Alternative Names, read from the extension itself (otherNames included). */
function subjectAltNames(c: X509Certificate): Omit<Identity, 'commonName' | 'organizations'> {
  const san = new x509.X509Certificate(c.raw).getExtension(OID_SAN);
  return san ? sanNames(san.value) : { dnsNames: [], ipAddresses: [], uris: [], emailAddresses: [], otherNames: [] };
}

const subjectField = (subject: string | undefined, field: string) =>
  (subject ?? '')
    .split('\n')
    .filter((l) => l.startsWith(`${field}=`))
    .map((l) => l.slice(field.length + 1));

/** The leaf of a PEM chain, as facts the controller compares against the spec. */
export function inspectCertificate(pem: string): CertificateInfo {
  const [leaf] = splitPem(pem);
  if (!leaf) throw new Error('no PEM certificate found');
  const c = new X509Certificate(leaf);
  return {
    x509: c,
    notBefore: new Date(c.validFrom),
    notAfter: new Date(c.validTo),
    isCA: c.ca,
    publicKeyDer: publicKeyDer(c.publicKey),
    commonName: subjectField(c.subject, 'CN')[0],
    organizations: subjectField(c.subject, 'O'),
    ...subjectAltNames(c),
  };
}

export const certificateMatchesKey = (pem: string, key: KeyObject): boolean => {
  try {
    const [first] = splitPem(pem);
    return !!first && new X509Certificate(first).checkPrivateKey(key);
  } catch {
    return false;
  }
};
