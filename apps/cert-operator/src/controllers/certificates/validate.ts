import { isIP } from 'node:net';
import type { CertificateObject } from '../../api/v1/certificate.js';
import { DEFAULT_DURATION } from '../../api/v1/certificate.js';
import { parseDuration } from '@opkit/runtime';
import { keySpecOf, keySpecProblem, signatureAlgorithmFor } from '../../pki/keys.js';
import { literalName, subjectRoundTripProblems } from '../../pki/csr.js';
import { nameConstraintsProblems } from '../../pki/general-names.js';
import { parseWindows } from '../../schedule/windows.js';
import type { RenewalSpec } from './renewal-plan.js';

const HOUR = 3_600_000;

/**
 * What the schema cannot say about a Certificate, each problem a sentence the user can act on.
 * cert-manager rejects these in its admission webhook; without one, they become a condition.
 */
export function validateCertificate(c: CertificateObject, isOurGroup: (group: string | undefined) => boolean): string[] {
  const s = c.spec;
  const problems: string[] = [];
  const keyProblem = keySpecProblem(keySpecOf(s.privateKey));
  if (keyProblem) problems.push(`spec.privateKey: ${keyProblem}`);
  if (s.privateKey?.algorithm === 'Ed25519' && s.privateKey.size) problems.push('spec.privateKey.size must be empty for Ed25519');
  let duration = parseDuration(DEFAULT_DURATION);
  try {
    if (s.duration) duration = parseDuration(s.duration);
    if (duration < HOUR) problems.push(`spec.duration ${s.duration} is shorter than the minimum of 1h`);
  } catch (err) {
    problems.push(`spec.duration: ${(err as Error).message}`);
  }
  if (s.renewBefore) {
    try {
      const rb = parseDuration(s.renewBefore);
      if (rb < 5 * 60_000) problems.push(`spec.renewBefore ${s.renewBefore} is shorter than the minimum of 5m`);
      if (rb >= duration) problems.push(`spec.renewBefore ${s.renewBefore} must be shorter than spec.duration ${s.duration ?? DEFAULT_DURATION}`);
    } catch (err) {
      problems.push(`spec.renewBefore: ${(err as Error).message}`);
    }
  }
  // A common name outside the SANs is fine for SelfSigned and CA issuers (cert-manager refuses it
  // only for ACME, whose signer says so on the request).
  for (const ip of s.ipAddresses ?? []) if (!isIP(ip)) problems.push(`spec.ipAddresses: "${ip}" is not an IP address`);
  problems.push(...subjectRoundTripProblems(s));
  for (const e of s.emailAddresses ?? []) if (!/^[^@\s]+@[^@\s]+$/.test(e)) problems.push(`spec.emailAddresses: "${e}" is not an email address`);
  for (const u of s.uris ?? []) {
    try {
      new URL(u);
    } catch {
      problems.push(`spec.uris: "${u}" is not a URI`);
    }
  }
  if (s.keystores?.pkcs12?.create && s.keystores.pkcs12.profile === 'LegacyRC2') {
    problems.push(
      'spec.keystores.pkcs12.profile LegacyRC2 is not supported (OpenSSL 3 refuses RC2 without its legacy provider): use LegacyDES, which the same Java and Windows versions read, or Modern2023',
    );
  }
  if (s.keystores?.pkcs12?.create && s.keystores.pkcs12.profile === 'Modern2026')
    problems.push('spec.keystores.pkcs12.profile Modern2026 is not supported yet: use Modern2023 (AES-256, PBKDF2, SHA-256 MAC), which more readers open');
  // cert-manager's fields this operator accepts but does not (yet) do: said, never ignored.
  const signs = signatureAlgorithmFor(keySpecOf(s.privateKey));
  if (s.signatureAlgorithm && s.signatureAlgorithm !== signs)
    problems.push(`spec.signatureAlgorithm ${s.signatureAlgorithm} is not supported for this key: this operator signs with ${signs} (leave it unset)`);
  problems.push(...renewalProblems(s.renewal, 'spec.renewal'));
  if (s.literalSubject) {
    try {
      if (!literalName(s.literalSubject).toJSON().length) problems.push('spec.literalSubject: empty');
    } catch (err) {
      problems.push(`spec.literalSubject: not an RFC 4514 name (${(err as Error).message})`);
    }
  }
  if (s.nameConstraints) problems.push(...nameConstraintsProblems(s.nameConstraints));
  const kind = s.issuerRef.kind;
  // An external issuer's kinds are its own (StepClusterIssuer, AWSPCAIssuer, ...).
  if (kind && kind !== 'Issuer' && kind !== 'ClusterIssuer' && isOurGroup(s.issuerRef.group))
    problems.push(`spec.issuerRef.kind must be Issuer or ClusterIssuer, not "${kind}"`);
  return problems;
}

/** What is wrong with a `renewal` (a Certificate's or an issuer's), as cert-manager's webhook would refuse it. */
export function renewalProblems(renewal: RenewalSpec | undefined, where: string): string[] {
  if (!renewal?.windows?.length) return [];
  if (renewal.policy === 'Disabled') return [`${where}: windows and policy Disabled contradict each other (a paused renewal has no windows): remove one`];
  try {
    parseWindows(renewal.windows);
    return [];
  } catch (err) {
    return [`${where}${(err as Error).message.replace(/^renewal/, '')}`];
  }
}
