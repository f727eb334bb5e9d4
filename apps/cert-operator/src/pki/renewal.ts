import { parseDuration } from '@opkit/runtime';
import { pointInWindow, type RenewalWindow } from '../acme/renewal-info.js';

const HOUR = 3_600_000;

/** The CA's renewal window for the current certificate (ARI), and what fixes the point in it. */
export interface AriRenewal {
  window: RenewalWindow;
  /** The Certificate's uid: each Certificate renews at its own point of a shared window. */
  seed: string;
}

/**
 * When to renew. Where the ACME server gave a renewal window for this certificate (ARI, RFC 9773),
 * a point inside it fixed per Certificate, never past expiry: the CA's word replaces renewBefore,
 * as in cert-manager v1.21 with ACMEUseARI. Otherwise as cert-manager computes it
 * (pkg/util/pki/renewaltime.go): notAfter minus renewBefore, where renewBefore defaults to a third
 * of the *issued* lifetime (renewal at 2/3), is honoured only when shorter than that lifetime, and
 * the result is truncated to whole seconds.
 */
export function renewalTime(notBefore: Date, notAfter: Date, opts: { renewBefore?: string; renewBeforePercentage?: number } = {}, ari?: AriRenewal): Date {
  if (ari) return new Date(Math.min(pointInWindow(ari.window, ari.seed).getTime(), notAfter.getTime()));
  const lifetime = notAfter.getTime() - notBefore.getTime();
  let before = lifetime / 3;
  if (opts.renewBefore) {
    const rb = parseDuration(opts.renewBefore);
    if (rb < lifetime) before = rb;
  } else if (opts.renewBeforePercentage && opts.renewBeforePercentage > 0 && opts.renewBeforePercentage < 100) {
    before = (lifetime * opts.renewBeforePercentage) / 100;
  }
  return new Date(Math.floor((notAfter.getTime() - before) / 1000) * 1000);
}

/** The wait before retrying a failed issuance: 1 h, doubling per failure, at most 32 h. */
export const issuanceBackoffMs = (failedAttempts: number): number => Math.min(HOUR * 2 ** Math.max(0, failedAttempts - 1), 32 * HOUR);
