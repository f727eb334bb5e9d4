import { randomBytes, X509Certificate, type KeyObject } from 'node:crypto';
import type { KeyUsage } from '../api/v1/shared.js';
import { x509 } from './crypto-provider.js';
import { csrExtension, OID_NAME_CONSTRAINTS, sanExtension, type ParsedCSR } from './csr.js';
import { readTlv } from './der.js';
import { parseX509, splitPem } from './inspect.js';
import { textMemo } from './parse-memo.js';
import { usageExtensions } from './usages.js';
import { pemBlock, readCertificate } from './x509-read.js';
import {
  authorityKeyIdentifier,
  basicConstraints,
  fromLibrary,
  keyIdentifier,
  subjectKeyIdentifier,
  writeCertificate,
  type RawExtension,
} from './x509-write.js';

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
  return b;
};

/** What signing under a CA certificate needs from it, read once for the 256 CAs that signed last. */
interface Authority {
  subject: Buffer;
  notAfter: Date;
  /**
   * The leaf's authority key id: the CA's subject key id as the CA wrote it, copied (RFC 5280
   * 4.2.1.1): recomputing it from the CA's key breaks chain building for a CA whose id was made
   * another way. Computed (method 1) only for a CA that has none.
   */
  keyId: Buffer;
}

const readAuthority = textMemo(256, 65_536, (pem: string): Authority => {
  const parts = readCertificate(pemBlock(pem, ['CERTIFICATE']));
  const ski = parts.extensions.find((e) => e.type === '2.5.29.14');
  return Object.freeze({
    subject: parts.subject,
    notAfter: new Date(parseX509(pem).validTo),
    keyId: ski ? readTlv(ski.value).content : keyIdentifier(parts.spki),
  });
});

function extensions(t: SigningTemplate, authority?: Authority): RawExtension[] {
  return [
    basicConstraints(t.isCA),
    ...usageExtensions(t.usages),
    // The SANs as parsed (otherNames included), critical when the subject is empty.
    ...sanExtension(t.csr, t.csr.subjectDer),
    // A CA's name constraints, as its CSR asks for them.
    ...(t.isCA ? [csrExtension(t.csr, OID_NAME_CONSTRAINTS)].filter((e): e is RawExtension => !!e) : []),
    subjectKeyIdentifier(t.csr.spki),
    ...(authority ? [authorityKeyIdentifier(authority.keyId)] : []),
    ...(t.crlDistributionPoints?.length ? [fromLibrary(new x509.CRLDistributionPointsExtension(t.crlDistributionPoints))] : []),
    ...(t.ocspServers?.length || t.issuingCertificateURLs?.length
      ? [fromLibrary(new x509.AuthorityInfoAccessExtension({ ocsp: t.ocspServers ?? [], caIssuers: t.issuingCertificateURLs ?? [] }))]
      : []),
  ];
}

// X.509 validity has whole-second precision: start on a second, so the lifetime is exactly the duration.
const signingTime = (t: SigningTemplate) => new Date(Math.floor((t.now ?? new Date()).getTime() / 1000) * 1000);

/** Signs the CSR with its own key: the SelfSigned issuer. The key must be the CSR's. */
export async function selfSign(t: SigningTemplate, key: KeyObject): Promise<Issued> {
  const now = signingTime(t);
  const pem = writeCertificate(
    {
      serial: serial(),
      issuer: t.csr.subjectDer,
      subject: t.csr.subjectDer,
      notBefore: now,
      notAfter: new Date(now.getTime() + t.durationMs),
      spki: t.csr.spki,
      extensions: extensions(t),
    },
    key,
  );
  return { certificate: `${pem}\n`, ca: `${pem}\n` };
}

/**
 * Signs the CSR with a CA: the CA issuer. The certificate never outlives its CA (cert-manager
 * truncates the same way); the chain carries the CA's own chain, and `ca` is its root.
 */
export async function caSign(t: SigningTemplate, ca: { chainPem: string; key: KeyObject }): Promise<Issued> {
  const now = signingTime(t);
  const chain = splitPem(ca.chainPem);
  const authority = readAuthority(chain[0]!);
  const leaf = writeCertificate(
    {
      serial: serial(),
      issuer: authority.subject,
      subject: t.csr.subjectDer,
      notBefore: now,
      notAfter: new Date(Math.min(now.getTime() + t.durationMs, authority.notAfter.getTime())),
      spki: t.csr.spki,
      extensions: extensions(t, authority),
    },
    ca.key,
  );
  return { certificate: `${[leaf, ...chain].join('\n')}\n`, ca: `${chain[chain.length - 1]}\n` };
}

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
