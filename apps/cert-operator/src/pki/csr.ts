import { createPublicKey, type KeyObject } from 'node:crypto';
import type { CertificateSpecType } from '../api/v1/certificate.js';
import type { KeyUsage } from '../api/v1/shared.js';
import { x509 } from './crypto-provider.js';
import { publicKeyDer, signingAlgorithm, toCryptoKeys } from './keys.js';
import { effectiveUsages, usageExtensions } from './usages.js';

/** What a certificate says about its subject: compared between spec, CSR and issued certificate. */
export interface Identity {
  commonName?: string;
  dnsNames: string[];
  ipAddresses: string[];
  uris: string[];
  emailAddresses: string[];
  organizations: string[];
}

/** The subject as RDNs: attributes in cert-manager's order, the common name last. */
function subjectName(spec: CertificateSpecType): x509.Name {
  const s = spec.subject ?? {};
  const rdns: Record<string, string[]>[] = [];
  const add = (attr: string, values?: string[]) => values?.length && rdns.push({ [attr]: values });
  add('C', s.countries);
  add('ST', s.provinces);
  add('L', s.localities);
  add('street', s.streetAddresses);
  add('postalCode', s.postalCodes);
  add('O', s.organizations);
  add('OU', s.organizationalUnits);
  if (s.serialNumber) add('serialNumber', [s.serialNumber]);
  if (spec.commonName) add('CN', [spec.commonName]);
  return new x509.Name(rdns as never);
}

export function sanExtension(id: Pick<Identity, 'dnsNames' | 'ipAddresses' | 'uris' | 'emailAddresses'>): x509.Extension[] {
  const names = [
    ...id.dnsNames.map((value) => ({ type: 'dns' as const, value })),
    ...id.ipAddresses.map((value) => ({ type: 'ip' as const, value })),
    ...id.uris.map((value) => ({ type: 'url' as const, value })),
    ...id.emailAddresses.map((value) => ({ type: 'email' as const, value })),
  ];
  return names.length ? [new x509.SubjectAlternativeNameExtension(names)] : [];
}

/** A PKCS#10 request for the Certificate's identity and usages, signed by the key. */
export async function createCSR(spec: CertificateSpecType, key: KeyObject): Promise<string> {
  const usages = effectiveUsages(spec.usages as KeyUsage[] | undefined, spec.isCA);
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: subjectName(spec),
    keys: await toCryptoKeys(key),
    signingAlgorithm: signingAlgorithm(key),
    extensions: [
      ...sanExtension({ dnsNames: spec.dnsNames ?? [], ipAddresses: spec.ipAddresses ?? [], uris: spec.uris ?? [], emailAddresses: spec.emailAddresses ?? [] }),
      ...usageExtensions(usages),
      ...(spec.isCA ? [new x509.BasicConstraintsExtension(true, undefined, true)] : []),
    ],
  });
  return csr.toString('pem');
}

export interface ParsedCSR extends Identity {
  csr: x509.Pkcs10CertificateRequest;
  subject: x509.Name;
  publicKey: KeyObject;
  extensions: x509.Extension[];
}

function identityOf(subject: x509.Name, extensions: readonly x509.Extension[]): Identity {
  const san = extensions.find((e): e is x509.SubjectAlternativeNameExtension => e instanceof x509.SubjectAlternativeNameExtension);
  const items = san?.names.items ?? [];
  const of = (t: string) => items.filter((n) => n.type === t).map((n) => n.value);
  return {
    commonName: subject.getField('CN')[0],
    dnsNames: of('dns'),
    ipAddresses: of('ip'),
    uris: of('url'),
    emailAddresses: of('email'),
    organizations: subject.getField('O'),
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
  return { csr, subject, extensions: [...csr.extensions], publicKey: createPublicKey({ key: Buffer.from(csr.publicKey.rawData), format: 'der', type: 'spki' }), ...identityOf(subject, csr.extensions) };
}

export const csrPublicKeyDer = (p: ParsedCSR): Buffer => publicKeyDer(p.publicKey);
export { identityOf };
