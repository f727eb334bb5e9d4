import type { CertificateObject } from '../../api/v1/certificate.js';
import { renewalTime } from '../../pki/renewal.js';
import { openAt, parseWindows, type WindowSpec } from '../../schedule/windows.js';
import { renewalInfoFor } from './renewal-info.js';

/** `renewal` as a Certificate (cert-manager v1.21) or an issuer (this operator) writes it. */
export interface RenewalSpec {
  policy?: string;
  windows?: WindowSpec[];
}

/** The issuer's own `renewal`, for every Certificate it issues. */
export interface IssuerRenewal {
  kind: string;
  name: string;
  renewal?: RenewalSpec;
}

export interface RenewalPlan {
  /** When the certificate is renewed ahead of expiry; undefined while renewal is paused. */
  at?: Date;
  /** Why then, in words (the Renewing trigger's message, the status). */
  why: string;
  /** Who paused renewal (`renewal.policy: Disabled`), and when it would have renewed otherwise. */
  paused?: { by: string; wouldRenewAt?: Date };
  /** No window opens between the time wanted and expiry: renewed outside the windows. */
  outsideWindows?: boolean;
}

/**
 * When a certificate is renewed ahead of expiry: one decision, pure, used by the trigger chain,
 * by readiness (`status.renewalTime`, and so the renewal metric) and after issuing.
 *
 * 1. The time wanted: a point of the CA's renewal window (ARI) when it gave one, else renewBefore
 *    (pki/renewal.ts).
 * 2. Pausing: `renewal.policy: Disabled` on the Certificate, or on its issuer (a pause by the
 *    platform team holds every Certificate the issuer issues); an expired certificate is still
 *    issued again (the Expired trigger), and readiness says the pause.
 * 3. Windows: the Certificate's `renewal.windows`, else its issuer's; the renewal waits for the
 *    next open window (from the time wanted, or from now once that has passed), unless none opens
 *    by a tenth of the lifetime before expiry: then it happens at the time wanted, said, since no
 *    window is worth an expired certificate (cert-manager would let it expire).
 * The time wanted is never later than that tenth either (a CA's window that reaches expiry).
 */
export function renewalPlan(
  c: CertificateObject,
  cert: { notBefore: Date; notAfter: Date },
  now: Date,
  issuer?: IssuerRenewal,
  /**
   * `cert` was just issued: there is no renewal info about it yet. What the status holds is about
   * the certificate it replaces, whose notAfter may be the same to the second (a renewal on reused
   * authorizations takes under a second: renewal-info.ts); used, it put the new certificate's
   * renewal inside the old one's window, in the past.
   */
  newlyIssued = false,
): RenewalPlan {
  const own = c.spec.renewal;
  const ari = newlyIssued ? undefined : renewalInfoFor(c, cert);
  // Never later than a tenth of the lifetime before expiry, whatever a CA's window or the renewal
  // windows say: a failed attempt then still has hours (six-day certificates) or days to retry.
  const latest = cert.notAfter.getTime() - (cert.notAfter.getTime() - cert.notBefore.getTime()) / 10;
  const wanted = new Date(Math.min(renewalTime(cert.notBefore, cert.notAfter, c.spec, ari).getTime(), latest));
  const why = ari
    ? `inside the ACME server's suggested renewal window, ${ari.window.start.toISOString()} to ${ari.window.end.toISOString()}`
    : 'before expiry by renewBefore (a third of the lifetime unless set)';
  const pausedBy = own?.policy === 'Disabled' ? 'the Certificate' : issuer?.renewal?.policy === 'Disabled' ? `${issuer.kind} "${issuer.name}"` : undefined;
  if (pausedBy) return { why: `renewal is paused by ${pausedBy} (renewal.policy: Disabled)`, paused: { by: pausedBy, wouldRenewAt: wanted } };
  const windows = own?.windows?.length ? own.windows : issuer?.renewal?.windows;
  if (!windows?.length) return { at: wanted, why };
  const whose = own?.windows?.length ? "the Certificate's" : `${issuer!.kind} "${issuer!.name}"'s`;
  // From when the renewal is wanted, or from now when that has passed (a pause lifted, a backoff
  // over, an operator that was down): a renewal overdue outside the windows still waits for one.
  const from = Math.max(wanted.getTime(), now.getTime());
  let opens: number | undefined;
  try {
    opens = openAt(parseWindows(windows), from);
  } catch {
    // The Certificate's own are refused before this (validate.ts); the issuer's are said on it.
    opens = undefined;
  }
  if (opens === undefined || opens > latest) {
    return { at: wanted, why: `${why}; none of ${whose} renewal windows opens in time before expiry, so outside them`, outsideWindows: true };
  }
  return opens === from
    ? { at: wanted, why: `${why}, in one of ${whose} renewal windows` }
    : { at: new Date(opens), why: `${why}, at the next opening of ${whose} renewal windows` };
}
