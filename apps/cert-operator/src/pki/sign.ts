import { randomBytes, X509Certificate, type KeyObject } from 'node:crypto';
import type { KeyUsage } from '../api/v1/shared.js';
import { x509 } from './crypto-provider.js';
import { csrExtension, OID_NAME_CONSTRAINTS, sanExtension, type ParsedCSR } from './csr.js';
import { signingAlgorithm, toCryptoKeys } from './keys.js';
import { parseX509, splitPem } from './inspect.js';
import { textMemo } from './parse-memo.js';
import { usageExtensions } from './usages.js';

export interface SigningTemplate {
  csr: ParsedCSR;
  durationMs: number;
  isCA: boolean;
  usages: KeyUsage[];
  now?: Date;
  /** Where relying parties find revocation and the issuer (the CA issuer's fields; SelfSigned has CRLs only). */
  crlDistributionPoints?: string[];
  ocspServers?: string[];
  issuingCertificateURLs?: string[];
}

export interface Issued {
  /** Leaf first, then the issuing chain, PEM. */
  certificate: string;
  /** The root of the chain, PEM (the certificate itself when self-signed). */
  ca: string;
}

// A positive 128-bit serial: unpredictable, as CA/Browser Forum rules require.
const serial = () => {
  const b = randomBytes(16);
  b[0]! &= 0x7f;
  return b.toString('hex');
};

/**
 * The leaf's authority key id is the CA's subject key id as the CA wrote it, copied (RFC 5280
 * 4.2.1.1): recomputing it from the CA's key (method 1) breaks chain building for a CA whose id
 * was made another way. Computed only for a CA that has none.
 */
async function authorityKeyId(authority: x509.X509Certificate): Promise<x509.Extension> {
  const ski = authority.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId;
  return ski ? new x509.AuthorityKeyIdentifierExtension(ski) : x509.AuthorityKeyIdentifierExtension.create(authority);
}

async function extensions(t: SigningTemplate, authority?: x509.X509Certificate): Promise<x509.Extension[]> {
  return [
    new x509.BasicConstraintsExtension(t.isCA, undefined, true),
    ...usageExtensions(t.usages),
    // The SANs as parsed (otherNames included), critical when the subject is empty.
    ...sanExtension(t.csr, t.csr.subject),
    // A CA's name constraints, as its CSR asks for them.
    ...(t.isCA ? [csrExtension(t.csr, OID_NAME_CONSTRAINTS)].filter((e): e is x509.Extension => !!e) : []),
    await x509.SubjectKeyIdentifierExtension.create(t.csr.csr.publicKey),
    ...(authority ? [await authorityKeyId(authority)] : []),
    ...(t.crlDistributionPoints?.length ? [new x509.CRLDistributionPointsExtension(t.crlDistributionPoints)] : []),
    ...(t.ocspServers?.length || t.issuingCertificateURLs?.length
      ? [new x509.AuthorityInfoAccessExtension({ ocsp: t.ocspServers ?? [], caIssuers: t.issuingCertificateURLs ?? [] })]
      : []),
  ];
}

/** Signs the CSR with its own key: the SelfSigned issuer. The key must be the CSR's. */
// X.509 validity has whole-second precision: start on a second, so the lifetime is exactly the duration.
const signingTime = (t: SigningTemplate) => new Date(Math.floor((t.now ?? new Date()).getTime() / 1000) * 1000);

export async function selfSign(t: SigningTemplate, key: KeyObject): Promise<Issued> {
  const now = signingTime(t);
  const keys = await toCryptoKeys(key);
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: t.csr.subject,
    issuer: t.csr.subject,
    notBefore: now,
    notAfter: new Date(now.getTime() + t.durationMs),
    publicKey: keys.publicKey,
    signingKey: keys.privateKey,
    signingAlgorithm: signingAlgorithm(key),
    extensions: await extensions(t),
  });
  const pem = cert.toString('pem');
  return { certificate: `${pem}\n`, ca: `${pem}\n` };
}

/**
 * Signs the CSR with a CA: the CA issuer. The certificate never outlives its CA (cert-manager
 * truncates the same way); the chain carries the CA's own chain, and `ca` is its root.
 */
export async function caSign(t: SigningTemplate, ca: { chainPem: string; key: KeyObject }): Promise<Issued> {
  const now = signingTime(t);
  const chain = splitPem(ca.chainPem);
  const caCert = parseCaCertificate(chain[0]!);
  const notAfter = new Date(Math.min(now.getTime() + t.durationMs, caCert.notAfter.getTime()));
  const keys = await toCryptoKeys(ca.key);
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: t.csr.subject,
    issuer: caCert.subjectName,
    notBefore: now,
    notAfter,
    publicKey: t.csr.csr.publicKey,
    signingKey: keys.privateKey,
    signingAlgorithm: signingAlgorithm(ca.key),
    extensions: await extensions(t, caCert),
  });
  return { certificate: `${[leaf.toString('pem'), ...chain].join('\n')}\n`, ca: `${chain[chain.length - 1]}\n` };
}

/** A CA's certificate as the x509 library reads it, parsed once for the 256 CAs that signed last. */
const parseCaCertificate = textMemo(256, 65_536, (pem: string) => new x509.X509Certificate(pem));

/** Why a Secret's pair cannot sign as a CA, if it cannot: Issuer readiness for the CA type. */
export function caKeyPairProblem(chainPem: string | undefined, key: KeyObject | undefined): string | undefined {
  if (!chainPem) return 'it has no tls.crt';
  if (!key) return 'it has no tls.key';
  const [first] = splitPem(chainPem);
  if (!first) return 'its tls.crt holds no PEM certificate';
  let cert: X509Certificate;
  try {
    cert = parseX509(first);
  } catch (err) {
    return `its tls.crt does not parse: ${(err as Error).message}`;
  }
  if (!cert.ca) return 'its tls.crt is not a CA certificate (basicConstraints CA:FALSE)';
  if (!cert.checkPrivateKey(key)) return 'its tls.key does not match its tls.crt';
  if (new Date(cert.validTo).getTime() < Date.now()) return `its CA certificate expired at ${new Date(cert.validTo).toISOString()}`;
  return undefined;
}
