import { AccountNotReadyError } from '../../acme/accounts.js';
import { AcmeProblemError, AcmeProtocolError, AcmeRateLimitError, AcmeUnavailableError } from '../../acme/client.js';
import { DnsError } from '../../dns/client.js';

export type AcmeFailure =
  /** Try again after the recorded backoff (at least `atLeastMs`, a server's Retry-After). */
  | { kind: 'retry'; message: string; atLeastMs?: number }
  /** Our side is not ready yet (the account is being registered): look again shortly, no backoff. */
  | { kind: 'wait'; message: string; requeueAfter: number }
  /** The server forgot the account: re-register, then retry. */
  | { kind: 'account-lost'; message: string }
  /** The object is gone on the server (an expired order, a restarted CA): start over, after the backoff. */
  | { kind: 'not-found'; message: string }
  /** The server refused for good: record the failure. */
  | { kind: 'final'; message: string };

/**
 * What an ACME error means for an Order or Challenge. Never hammer the CA: rate limits wait for
 * Retry-After, outages and forgotten objects back off (the count is kept in status, see retry.ts),
 * refusals are final. Pure: no state here.
 */
export function classify(err: unknown): AcmeFailure {
  if (err instanceof AcmeRateLimitError) return { kind: 'retry', message: err.message, atLeastMs: err.retryAfterMs };
  if (err instanceof AcmeUnavailableError) return { kind: 'retry', message: err.message };
  // A server answering what is not ACME is named on the object and retried after the backoff (it
  // may be fixed, or be a proxy in the way), never left to the reconcile's error path, which says
  // nothing on the Issuer.
  if (err instanceof AcmeProtocolError) return { kind: 'retry', message: err.message };
  if (err instanceof AccountNotReadyError) return { kind: 'wait', message: err.message, requeueAfter: 5_000 };
  // The DNS server refused or did not answer (a wrong TSIG key, a server down): said, and retried
  // after the backoff, since fixing the key or the server needs no change to the Challenge.
  if (err instanceof DnsError) return { kind: 'retry', message: `DNS-01: ${err.message}` };
  if (err instanceof AcmeProblemError) {
    if (err.accountGone) return { kind: 'account-lost', message: `the ACME server does not know the account: ${err.message}` };
    if (err.notFound) return { kind: 'not-found', message: err.message };
    return { kind: 'final', message: `${err.message} (${err.type})` };
  }
  throw err;
}
