import { AccountNotReadyError } from '../../acme/accounts.js';
import { AcmeProblemError, AcmeRateLimitError, AcmeUnavailableError } from '../../acme/client.js';

export type AcmeFailure =
  /** Try again after the delay; show the message meanwhile. */
  | { kind: 'retry'; message: string; requeueAfter: number }
  /** The server forgot the account: re-register, then retry. */
  | { kind: 'account-lost'; message: string }
  /** The object is gone on the server (an expired order, a restarted CA): start over. */
  | { kind: 'not-found'; message: string }
  /** The server refused for good: record the failure. */
  | { kind: 'final'; message: string };

const attempts = new Map<string, number>();

/** Exponential backoff per object for an unreachable server: 5 s doubling to 5 min. */
export function unavailableBackoff(key: string): number {
  const n = (attempts.get(key) ?? 0) + 1;
  attempts.set(key, n);
  return Math.min(5_000 * 2 ** (n - 1), 300_000);
}
export const resetBackoff = (key: string) => attempts.delete(key);

/**
 * What an ACME error means for an Order or Challenge. Never hammer the CA: rate limits wait for
 * Retry-After, outages back off to minutes, refusals are final.
 */
export function classify(err: unknown, key: string): AcmeFailure {
  if (err instanceof AcmeRateLimitError) return { kind: 'retry', message: err.message, requeueAfter: err.retryAfterMs };
  if (err instanceof AcmeUnavailableError) {
    const wait = unavailableBackoff(key);
    return { kind: 'retry', message: `${err.message}; retrying in ${Math.round(wait / 1000)}s`, requeueAfter: wait };
  }
  if (err instanceof AccountNotReadyError) return { kind: 'retry', message: err.message, requeueAfter: 5_000 };
  if (err instanceof AcmeProblemError) {
    if (err.accountGone) return { kind: 'account-lost', message: `the ACME server does not know the account: ${err.message}` };
    if (err.notFound) return { kind: 'not-found', message: err.message };
    return { kind: 'final', message: `${err.message} (${err.type})` };
  }
  throw err;
}

