import { createPublicKey, type KeyObject } from 'node:crypto';
import type { CertificateSpecType } from '../api/v1/certificate.js';
import type { KeyUsage } from '../api/v1/shared.js';
import { x509 } from './crypto-provider.js';
import { publicKeyDer, signingAlgorithm, toCryptoKeys } from './keys.js';
import { effectiveUsages, usageExtensions } from './usages.js';

/** The subject's fields as a Certificate's spec.subject names them. */
export interface SubjectFields {
  organizations: string[];
  countries: string[];
  organizationalUnits: string[];
  localities: string[];
  provinces: string[];
  streetAddresses: string[];
  postalCodes: string[];
  serialNumber?: string;
}

/** What a certificate says about its subject: compared between spec, CSR and issued certificate. */
export interface Identity {
  commonName?: string;
  dnsNames: string[];
  ipAddresses: string[];
  uris: string[];
  emailAddresses: string[];
  organizations: string[];
}

/**
 * Subject attributes by OID, in cert-manager's order (the common name goes last). OIDs, not short
 * names: the x509 library knows no short name for street, postalCode or serialNumber.
 */
export const SUBJECT_ATTRIBUTES: readonly [keyof SubjectFields, string][] = [
  ['countries', '2.5.4.6'],
  ['provinces', '2.5.4.8'],
  ['localities', '2.5.4.7'],
  ['streetAddresses', '2.5.4.9'],
  ['postalCodes', '2.5.4.17'],
  ['organizations', '2.5.4.10'],
  ['organizationalUnits', '2.5.4.11'],
  ['serialNumber', '2.5.4.5'],
];
const CN = '2.5.4.3';

/** A subject field's values as a list (serialNumber is a single string). */
export function subjectValues(subject: Partial<SubjectFields> | undefined, field: keyof SubjectFields): string[] {
  const v = subject?.[field];
  return v === undefined ? [] : typeof v === 'string' ? [v] : v;
}

function subjectName(spec: CertificateSpecType): x509.Name {
  const rdns: Record<string, string[]>[] = [];
  for (const [field, oid] of SUBJECT_ATTRIBUTES) {
    const values = subjectValues(spec.subject, field);
    if (values.length) rdns.push({ [oid]: values });
  }
  if (spec.commonName) rdns.push({ [CN]: [spec.commonName] });
  return new x509.Name(rdns as never);
}

/** The subject fields of a parsed name. */
export function subjectFieldsOf(name: x509.Name): SubjectFields {
  const out = { organizations: [], countries: [], organizationalUnits: [], localities: [], provinces: [], streetAddresses: [], postalCodes: [] } as SubjectFields;
  for (const [field, oid] of SUBJECT_ATTRIBUTES) {
    const values = name.getField(oid);
    if (field === 'serialNumber') {
      if (values[0]) out.serialNumber = values[0];
    } else out[field] = values;
  }
  return out;
}

/** The subjectAltName extension; critical when the subject is empty, as RFC 5280 §4.2.1.6 requires. */
export function sanExtension(id: Pick<Identity, 'dnsNames' | 'ipAddresses' | 'uris' | 'emailAddresses'>, subject: x509.Name): x509.Extension[] {
  const names = [
    ...id.dnsNames.map((value) => ({ type: 'dns' as const, value })),
    ...id.ipAddresses.map((value) => ({ type: 'ip' as const, value })),
    ...id.uris.map((value) => ({ type: 'url' as const, value })),
    ...id.emailAddresses.map((value) => ({ type: 'email' as const, value })),
  ];
  return names.length ? [new x509.SubjectAlternativeNameExtension(names, subject.toJSON().length === 0)] : [];
}

/** A PKCS#10 request for the Certificate's identity and usages, signed by the key. */
export async function createCSR(spec: CertificateSpecType, key: KeyObject): Promise<string> {
  const usages = effectiveUsages(spec.usages as KeyUsage[] | undefined, spec.isCA);
  const name = subjectName(spec);
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name,
    keys: await toCryptoKeys(key),
    signingAlgorithm: signingAlgorithm(key),
    extensions: [
      ...sanExtension({ dnsNames: spec.dnsNames ?? [], ipAddresses: spec.ipAddresses ?? [], uris: spec.uris ?? [], emailAddresses: spec.emailAddresses ?? [] }, name),
      ...usageExtensions(usages),
      ...(spec.isCA ? [new x509.BasicConstraintsExtension(true, undefined, true)] : []),
    ],
  });
  return csr.toString('pem');
}

export interface ParsedCSR extends Identity {
  csr: x509.Pkcs10CertificateRequest;
  subject: x509.Name;
  subjectFields: SubjectFields;
  publicKey: KeyObject;
  extensions: x509.Extension[];
}

function identityOf(subject: x509.Name, extensions: readonly x509.Extension[]): Identity {
  const san = extensions.find((e): e is x509.SubjectAlternativeNameExtension => e instanceof x509.SubjectAlternativeNameExtension);
  const items = san?.names.items ?? [];
  const of = (t: string) => items.filter((n) => n.type === t).map((n) => n.value);
  return {
    commonName: subject.getField(CN)[0],
    dnsNames: of('dns'),
    ipAddresses: of('ip'),
    uris: of('url'),
    emailAddresses: of('email'),
    organizations: subject.getField('2.5.4.10'),
  };
}

/** Parses and verifies a PEM CSR: its self-signature must hold. */
export async function parseCSR(pem: string): Promise<ParsedCSR> {
  let csr: x509.Pkcs10CertificateRequest;
  try {
    csr = new x509.Pkcs10CertificateRequest(pem);
  } catch (err) {
    throw new Error(`the request is not a PEM certificate signing request: ${(err as Error).message}`);
  }
  if (!(await csr.verify())) throw new Error('the certificate signing request has an invalid signature');
  const subject = new x509.Name(csr.subject);
  return { csr, subject, subjectFields: subjectFieldsOf(subject), extensions: [...csr.extensions], publicKey: createPublicKey({ key: Buffer.from(csr.publicKey.rawData), format: 'der', type: 'spki' }), ...identityOf(subject, csr.extensions) };
}

export const csrPublicKeyDer = (p: ParsedCSR): Buffer => publicKeyDer(p.publicKey);
export { identityOf };
