import type { CertificateObject } from '../../api/v1/certificate.js';
import type { AriRenewal } from '../../pki/renewal.js';
import type { CertificateStatus } from './status.js';

/**
 * The renewal info in `status.acme.ari` describes the certificate whose notAfter the same status
 * records (docs/cert-operator.md, "ACME Renewal Information"): the renewal-info controller writes
 * it only for the certificate the Secret holds and the status names, and every status edit that
 * records another certificate forgets it (forgetRenewalInfo). So a window is used only for the
 * certificate it was given for.
 */
export function renewalInfoFor(c: CertificateObject, cert: { notAfter: Date }): AriRenewal | undefined {
  const w = c.status?.acme?.ari?.suggestedWindow;
  if (!w || !recordsCertificate(c.status, cert.notAfter)) return undefined;
  const start = Date.parse(w.start);
  const end = Date.parse(w.end);
  if (!(start < end)) return undefined;
  return { window: { start: new Date(start), end: new Date(end) }, seed: c.metadata.uid ?? `${c.metadata.namespace}/${c.metadata.name}` };
}

/**
 * Whether the status records the certificate valid until `notAfter`: compared in whole seconds, as
 * the status records times (a CA may write fractions of a second).
 */
export function recordsCertificate(s: CertificateStatus | undefined, notAfter: Date): boolean {
  return !!s?.notAfter && Date.parse(s.notAfter) === Math.floor(notAfter.getTime() / 1000) * 1000;
}

/**
 * A status about to record the certificate valid until `notAfter` (RFC 3339) drops renewal info
 * about another. A new issuance always does (`issued`): a CA can sign its successor within the
 * same second, with the same notAfter (a renewal on reused authorizations takes under a second),
 * and the window of the certificate replaced, kept for its successor, renewed that one at once
 * again, in a loop (ari-profiles.int.test.ts).
 */
export function forgetRenewalInfo(s: CertificateStatus, notAfter: string, issued = false): void {
  if (!s.acme?.ari || (!issued && recordsCertificate(s, new Date(notAfter)))) return;
  delete s.acme.ari;
  if (!Object.keys(s.acme).length) delete s.acme;
}
