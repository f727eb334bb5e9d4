import { createHash } from 'node:crypto';

/** What the proxy does with one request. */
export type Fault =
  | { kind: 'pass' }
  /** Forward it after a while. */
  | { kind: 'delay'; ms: number }
  /** Answer nothing for a while, then drop the connection (a stalled API server). */
  | { kind: 'hang'; ms: number }
  /** Drop the connection at once, nothing forwarded. */
  | { kind: 'reset' }
  /** Answer an error status without forwarding (429 with Retry-After, 500, 503). */
  | { kind: 'status'; code: 429 | 500 | 503; retryAfterSeconds?: number }
  /** A watch: 410 Gone, as the API server answers a resourceVersion etcd compacted away. */
  | { kind: 'gone' }
  /** A watch: 504 with ResourceVersionTooLarge, as a lagging or restored API server answers. */
  | { kind: 'tooLarge' }
  /** A write: forwarded and applied, then the client gets a 500 (or a reset) instead of the answer. */
  | { kind: 'writeThenFail'; reset: boolean }
  /** A watch: forwarded, then cut after a while, by a reset or by a clean end of the stream. */
  | { kind: 'cutWatch'; afterMs: number; reset: boolean };

export interface RequestInfo {
  method: string;
  /** Path without the query. */
  path: string;
  watch: boolean;
  /** A watch asked to resume from a resourceVersion (410 and too-large only make sense then). */
  resumes: boolean;
}

/** How often each fault happens, as a share of the requests it can apply to (0..1). */
export interface FaultRates {
  delay: number;
  hang: number;
  reset: number;
  throttle: number;
  serverError: number;
  writeThenFail: number;
  watchCut: number;
  watchGone: number;
  watchTooLarge: number;
}

export const DEFAULT_RATES: FaultRates = {
  delay: 0.08,
  hang: 0.01,
  reset: 0.03,
  throttle: 0.03,
  serverError: 0.04,
  writeThenFail: 0.06,
  watchCut: 0.5,
  watchGone: 0.08,
  watchTooLarge: 0.05,
};

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * A uniform number in [0, 1) for the n-th occurrence of a request, from the seed alone: the same
 * seed gives every request the same fault however requests interleave (they race), so a failing
 * schedule replays from its seed. `salt` separates the draws of one decision.
 */
export function draw(seed: number, key: string, n: number, salt: string): number {
  const h = createHash('sha256').update(`${seed}|${key}|${n}|${salt}`).digest();
  return h.readUInt32BE(0) / 2 ** 32;
}

/** The fault for the n-th occurrence of a request: a pure function of the seed, the request and n. */
export function decideFault(seed: number, r: RequestInfo, n: number, rates: FaultRates = DEFAULT_RATES): Fault {
  const key = `${r.method} ${r.path}${r.watch ? ' watch' : ''}`;
  const d = (salt: string) => draw(seed, key, n, salt);
  if (r.watch) {
    if (r.resumes && d('gone') < rates.watchGone) return { kind: 'gone' };
    if (r.resumes && d('large') < rates.watchTooLarge) return { kind: 'tooLarge' };
    if (d('reset') < rates.reset) return { kind: 'reset' };
    if (d('status') < rates.serverError) return { kind: 'status', code: d('code') < 0.5 ? 500 : 503 };
    if (d('cut') < rates.watchCut) return { kind: 'cutWatch', afterMs: Math.round(200 + d('after') * 8_000), reset: d('how') < 0.5 };
    return { kind: 'pass' };
  }
  if (WRITES.has(r.method) && d('wtf') < rates.writeThenFail) return { kind: 'writeThenFail', reset: d('how') < 0.3 };
  if (d('hang') < rates.hang) return { kind: 'hang', ms: Math.round(1_000 + d('len') * 4_000) };
  if (d('reset') < rates.reset) return { kind: 'reset' };
  if (d('throttle') < rates.throttle) return { kind: 'status', code: 429, retryAfterSeconds: 1 + Math.floor(d('after') * 2) };
  if (d('status') < rates.serverError) return { kind: 'status', code: d('code') < 0.5 ? 500 : 503 };
  if (d('delay') < rates.delay) return { kind: 'delay', ms: Math.round(50 + d('len') * 1_500) };
  return { kind: 'pass' };
}
