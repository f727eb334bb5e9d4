import { X509Certificate, type KeyObject } from 'node:crypto';
import type { Identity } from './csr.js';
import { publicKeyDer } from './keys.js';

/** PEM blocks of a chain, leaf first. */
export const splitPem = (pem: string): string[] => pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];

export interface CertificateInfo extends Identity {
  x509: X509Certificate;
  notBefore: Date;
  notAfter: Date;
  isCA: boolean;
  publicKeyDer: Buffer;
}

function parseSubjectAltName(s: string | undefined): Omit<Identity, 'commonName' | 'organizations'> {
  const out = { dnsNames: [] as string[], ipAddresses: [] as string[], uris: [] as string[], emailAddresses: [] as string[] };
  for (const part of (s ?? '').split(/, (?=[A-Za-z ]+:)/)) {
    const i = part.indexOf(':');
    if (i < 0) continue;
    const type = part.slice(0, i);
    const value = part.slice(i + 1).replace(/^"|"$/g, '');
    if (type === 'DNS') out.dnsNames.push(value);
    else if (type === 'IP Address') out.ipAddresses.push(value);
    else if (type === 'URI') out.uris.push(value);
    else if (type === 'email') out.emailAddresses.push(value);
  }
  return out;
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
    ...parseSubjectAltName(c.subjectAltName),
  };
}

export const certificateMatchesKey = (pem: string, key: KeyObject): boolean => {
  try {
    return new X509Certificate(splitPem(pem)[0]).checkPrivateKey(key);
  } catch {
    return false;
  }
};
