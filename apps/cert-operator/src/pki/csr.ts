import type { KeyObject } from 'node:crypto';
import type { CertificateSpecType } from '../api/v1/certificate.js';
import type { KeyUsage } from '../api/v1/shared.js';
import { x509 } from './crypto-provider.js';
import { readTlv } from './der.js';
import { publicKeyDer } from './keys.js';
import { textMemo } from './parse-memo.js';
import { effectiveUsages, usageExtensions } from './usages.js';
import { nameConstraintsExtension, OID_NAME_CONSTRAINTS, OID_SAN, subjectAltName, subjectAltNamesOf, type OtherName } from './general-names.js';
import { pemBlock, readCsr, UnsupportedSignature } from './x509-read.js';
import { basicConstraints, writeCsr, type RawExtension } from './x509-write.js';

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
  otherNames: OtherName[];
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
  // An empty serialNumber is none (as cert-manager): written, it was never read back the same.
  return v === undefined ? [] : typeof v === 'string' ? (v ? [v] : []) : v;
}

/**
 * An RFC 4514 string as a subject: the string names the most specific attribute first, the
 * encoded name the least specific (`CN=app,O=Example,C=DE` is C, then O, then CN).
 */
export const literalName = (literal: string): x509.Name => new x509.Name(new x509.Name(literal).toJSON().reverse());

function subjectName(spec: CertificateSpecType): x509.Name {
  if (spec.literalSubject) return literalName(spec.literalSubject);
  const rdns: Record<string, string[]>[] = [];
  for (const [field, oid] of SUBJECT_ATTRIBUTES) {
    const values = subjectValues(spec.subject, field);
    if (values.length) rdns.push({ [oid]: values });
  }
  if (spec.commonName) rdns.push({ [CN]: [spec.commonName] });
  return new x509.Name(rdns as never);
}

/**
 * Subject values that would not read back from the request as written (the x509 library drops a
 * backslash, for one). Such a spec never matches its own request, and the operator would replace
 * the request for ever: validation refuses it instead, naming the value.
 */
export function subjectRoundTripProblems(spec: CertificateSpecType): string[] {
  if (spec.literalSubject) return [];
  const decoded = new x509.Name(subjectName(spec).toArrayBuffer());
  const problems: string[] = [];
  const check = (field: string, want: string[], oid: string) => {
    const got = decoded.getField(oid);
    if (want.length !== got.length || want.some((v, i) => v !== got[i]))
      problems.push(
        `spec.${field}: ${JSON.stringify(want.length === 1 ? want[0] : want)} cannot be encoded as written (it reads back as ${JSON.stringify(got.length === 1 ? got[0] : got)})`,
      );
  };
  for (const [field, oid] of SUBJECT_ATTRIBUTES) check(`subject.${field}`, subjectValues(spec.subject, field), oid);
  check('commonName', spec.commonName ? [spec.commonName] : [], CN);
  return problems;
}

/** An encoded Name as the x509 library reads it (to compare with a literalSubject). */
export const nameOf = (der: Buffer): x509.Name => new x509.Name(der);

/** The subject fields of a parsed name. */
export function subjectFieldsOf(name: x509.Name): SubjectFields {
  const out = {
    organizations: [],
    countries: [],
    organizationalUnits: [],
    localities: [],
    provinces: [],
    streetAddresses: [],
    postalCodes: [],
  } as SubjectFields;
  for (const [field, oid] of SUBJECT_ATTRIBUTES) {
    const values = name.getField(oid);
    if (field === 'serialNumber') {
      if (values[0]) out.serialNumber = values[0];
    } else out[field] = values;
  }
  return out;
}

/** The subjectAltName extension; critical when the subject (an encoded Name) is empty, as RFC 5280 §4.2.1.6 requires. */
export function sanExtension(
  id: Pick<Identity, 'dnsNames' | 'ipAddresses' | 'uris' | 'emailAddresses'> & { otherNames?: OtherName[] },
  subject: Buffer,
): RawExtension[] {
  const names = { ...id, otherNames: id.otherNames ?? [] };
  if (!names.dnsNames.length && !names.ipAddresses.length && !names.uris.length && !names.emailAddresses.length && !names.otherNames.length) return [];
  return [subjectAltName(names, readTlv(subject).content.length === 0)];
}

/** A PKCS#10 request for the Certificate's identity and usages, signed by the key. */
export async function createCSR(spec: CertificateSpecType, key: KeyObject): Promise<string> {
  const usages = effectiveUsages(spec.usages as KeyUsage[] | undefined, spec.isCA);
  const subject = Buffer.from(subjectName(spec).toArrayBuffer());
  return writeCsr(
    subject,
    [
      ...sanExtension(
        {
          dnsNames: spec.dnsNames ?? [],
          ipAddresses: spec.ipAddresses ?? [],
          uris: spec.uris ?? [],
          emailAddresses: spec.emailAddresses ?? [],
          otherNames: spec.otherNames ?? [],
        },
        subject,
      ),
      // Some CAs refuse CSRs that carry usages: then they travel in the CertificateRequest only.
      ...(spec.encodeUsagesInRequest === false ? [] : usageExtensions(usages)),
      ...(spec.isCA ? [basicConstraints(true)] : []),
      ...(spec.isCA && spec.nameConstraints ? [nameConstraintsExtension(spec.nameConstraints)] : []),
    ],
    key,
  );
}

export interface ParsedCSR extends Identity {
  /** The subject as encoded: a certificate for the request carries it as is (nameOf reads it). */
  subjectDer: Buffer;
  subjectFields: SubjectFields;
  /** SubjectPublicKeyInfo DER, and the key. */
  spki: Buffer;
  publicKey: KeyObject;
  extensions: RawExtension[];
}

function identityOf(subject: x509.Name, extensions: readonly RawExtension[]): Identity {
  return { commonName: subject.getField(CN)[0], ...subjectAltNamesOf(extensions), organizations: subject.getField('2.5.4.10') };
}

/** The CSR's own encoding of an extension, to be carried into the certificate as asked (name constraints, SANs with otherNames). */
export const csrExtension = (csr: ParsedCSR, oid: string) => csr.extensions.find((e) => e.type === oid);
export { OID_NAME_CONSTRAINTS, OID_SAN };

/** A request that is not a usable CSR: its author's to fix (a CertificateRequest's spec.request). */
export class CsrError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CsrError';
  }
}

/**
 * Parses and verifies a PEM CSR: its self-signature must hold. Anything else is a CsrError.
 * Read by hand (x509-read.ts: about 0.4 ms, against 2.4 through the x509 library) and kept for the
 * 256 CSRs read last, by their PEM: a request's CSR never changes, and it is read again at each
 * reconcile of the request and of its Certificate (the trigger compares it with the spec). A CSR
 * over 8 KiB (no real one is) is not kept, so a tenant's oversized requests cannot fill the
 * memory. The parsed object is shared: read-only.
 */
export const parseCSR = textMemo(256, 8_192, parseAndVerify);

async function parseAndVerify(pem: string): Promise<ParsedCSR> {
  let parts: ReturnType<typeof readCsr>;
  try {
    parts = readCsr(pemBlock(pem));
  } catch (err) {
    if (err instanceof UnsupportedSignature) throw new CsrError(`the certificate signing request's signature cannot be checked: ${err.message}`);
    throw new CsrError(`the request is not a PEM certificate signing request: ${(err as Error).message}`);
  }
  if (parts.signature !== 'valid') throw new CsrError('the certificate signing request has an invalid signature');
  try {
    // The name as encoded, not its string: re-parsing the string lost escaped commas and pluses,
    // and such a spec never matched its own request (a loop of requests).
    const subject = nameOf(parts.subject);
    return Object.freeze({
      subjectDer: parts.subject,
      subjectFields: subjectFieldsOf(subject),
      spki: parts.spki,
      publicKey: parts.publicKey,
      extensions: parts.extensions,
      ...identityOf(subject, parts.extensions),
    });
  } catch (err) {
    throw new CsrError(`the certificate signing request cannot be read: ${(err as Error).message}`);
  }
}

export const csrPublicKeyDer = (p: ParsedCSR): Buffer => publicKeyDer(p.publicKey);
export { identityOf };
