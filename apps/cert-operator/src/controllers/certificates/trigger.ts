import type { KeyObject } from 'node:crypto';
import type { CertificateObject } from '../../api/v1/certificate.js';
import type { CertificateRequestObject } from '../../api/v1/certificaterequest.js';
import { A } from '../../api/v1/shared.js';
import { parseCSR } from '../../pki/csr.js';
import { certificateMatchesKey, inspectCertificate, type CertificateInfo } from '../../pki/inspect.js';
import { describeKey, keySpecOf, parsePrivateKey, publicKeyDer } from '../../pki/keys.js';
import { renewalTime } from '../../pki/renewal.js';
import { secretData, type SecretObject } from '../../secrets/secret-reader.js';
import { unb64 } from '../certificaterequests/controller.js';

/** What the target Secret holds, parsed once per reconcile. */
export interface SecretState {
  secret?: SecretObject;
  certPem?: string;
  keyPem?: string;
  caPem?: string;
  cert?: CertificateInfo;
  key?: KeyObject;
  /** Why the data cannot be used, if it cannot. */
  problem?: { reason: string; message: string };
}

export function readSecretState(secret: SecretObject | undefined): SecretState {
  if (!secret) return { problem: { reason: 'DoesNotExist', message: 'Issuing certificate as Secret does not exist' } };
  const certPem = secretData(secret, 'tls.crt');
  const keyPem = secretData(secret, 'tls.key');
  const caPem = secretData(secret, 'ca.crt');
  const st: SecretState = { secret, certPem, keyPem, caPem };
  if (!certPem || !keyPem) return { ...st, problem: { reason: 'MissingData', message: `Issuing certificate as Secret does not contain ${!certPem ? 'a certificate' : 'a private key'}` } };
  try {
    st.key = parsePrivateKey(keyPem);
  } catch {
    return { ...st, problem: { reason: 'InvalidKeyPair', message: 'Issuing certificate as Secret contains an invalid private key' } };
  }
  try {
    st.cert = inspectCertificate(certPem);
  } catch {
    return { ...st, problem: { reason: 'InvalidCertificate', message: 'Issuing certificate as Secret contains an invalid certificate' } };
  }
  if (!certificateMatchesKey(certPem, st.key)) return { ...st, problem: { reason: 'InvalidKeyPair', message: 'Issuing certificate as Secret contains a private key that does not match the certificate' } };
  return st;
}

const sameSet = (a: readonly string[] = [], b: readonly string[] = []) => a.length === b.length && [...a].sort().every((v, i) => v === [...b].sort()[i]);

/** The first reason the Secret no longer matches the spec, in cert-manager's trigger order. */
function specMismatch(c: CertificateObject, st: SecretState, latest: CertificateRequestObject | undefined): string | undefined {
  const s = c.spec;
  const ann = st.secret?.metadata.annotations ?? {};
  const kind = s.issuerRef.kind || 'Issuer';
  if (ann[A.issuerName] !== s.issuerRef.name || ann[A.issuerKind] !== kind) return `Issuing certificate as the Secret was issued by ${ann[A.issuerKind] ?? '?'} "${ann[A.issuerName] ?? '?'}", not ${kind} "${s.issuerRef.name}"`;
  if (ann[A.certificateName] !== c.metadata.name) return `Issuing certificate as the Secret belongs to Certificate "${ann[A.certificateName] ?? '?'}"`;
  const want = keySpecOf(s.privateKey);
  const have = describeKey(st.key!);
  if (have.algorithm !== want.algorithm || have.size !== want.size) return `Issuing certificate as the private key is ${have.algorithm}${have.size ? ` ${have.size}` : ''}, not ${want.algorithm}${want.size ? ` ${want.size}` : ''}`;
  const cert = st.cert!;
  if ((s.commonName ?? undefined) !== (cert.commonName ?? undefined)) return 'Issuing certificate as the common name changed';
  if (!sameSet(s.dnsNames, cert.dnsNames)) return 'Issuing certificate as the DNS names changed';
  if (!sameSet(s.ipAddresses, cert.ipAddresses)) return 'Issuing certificate as the IP addresses changed';
  if (!sameSet(s.uris, cert.uris)) return 'Issuing certificate as the URIs changed';
  if (!sameSet(s.emailAddresses, cert.emailAddresses)) return 'Issuing certificate as the email addresses changed';
  if (!sameSet(s.subject?.organizations, cert.organizations)) return 'Issuing certificate as the organizations changed';
  if (!!s.isCA !== cert.isCA) return `Issuing certificate as isCA changed to ${!!s.isCA}`;
  if (latest) {
    const requested = latest.spec;
    if ((requested.duration ?? '') !== (s.duration ?? '')) return `Issuing certificate as the duration changed to ${s.duration}`;
    if (!sameSet(requested.usages, s.usages ?? requested.usages)) return 'Issuing certificate as the usages changed';
  }
  return undefined;
}

/**
 * Whether (and why) a new certificate must be issued: the Secret missing or unusable, the spec
 * changed, the certificate expired, or its renewal time reached.
 */
export function issuanceReason(c: CertificateObject, st: SecretState, latest: CertificateRequestObject | undefined, now: Date): { reason: string; message: string } | undefined {
  if (st.problem) return st.problem;
  const mismatch = specMismatch(c, st, latest);
  if (mismatch) return { reason: 'SpecChanged', message: mismatch };
  if (st.cert!.notAfter.getTime() <= now.getTime()) return { reason: 'Expired', message: `Issuing certificate as it expired at ${st.cert!.notAfter.toISOString()}` };
  const renewAt = renewalTime(st.cert!.notBefore, st.cert!.notAfter, c.spec);
  if (renewAt.getTime() <= now.getTime()) return { reason: 'Renewing', message: `Renewing certificate as renewal was scheduled at ${renewAt.toISOString()}` };
  return undefined;
}

/** Whether the latest request still asks for what the spec and key say (otherwise it is replaced). */
export async function requestMatches(cr: CertificateRequestObject, c: CertificateObject, keyDer: Buffer): Promise<boolean> {
  try {
    const csr = await parseCSR(unb64(cr.spec.request));
    if (!publicKeyDer(csr.publicKey).equals(keyDer)) return false;
    const s = c.spec;
    return (
      (s.commonName ?? undefined) === (csr.commonName ?? undefined) &&
      sameSet(s.dnsNames, csr.dnsNames) &&
      sameSet(s.ipAddresses, csr.ipAddresses) &&
      sameSet(s.uris, csr.uris) &&
      sameSet(s.emailAddresses, csr.emailAddresses) &&
      cr.spec.issuerRef.name === s.issuerRef.name &&
      (cr.spec.issuerRef.kind || 'Issuer') === (s.issuerRef.kind || 'Issuer') &&
      (cr.spec.duration ?? '') === (s.duration ?? '') &&
      !!cr.spec.isCA === !!s.isCA
    );
  } catch {
    return false;
  }
}

