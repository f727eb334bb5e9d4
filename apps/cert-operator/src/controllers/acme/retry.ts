import { rfc3339 } from '@opkit/runtime';

/**
 * Retries after transient failures talking to an ACME server (unreachable, rate limited, an
 * object it forgot), recorded in the object's status as cert-manager records failed issuances:
 * so a restart does not start the count again, and the operator's own status writes, which
 * reconcile the object again at once, cannot shorten the wait.
 */
export interface RetryState {
  failedAttempts?: number;
  lastFailureTime?: string;
  /** A server's Retry-After, as a time: no attempt before it, whatever the backoff says. */
  retryAt?: string;
}

const BASE_MS = 30_000;
const MAX_MS = 30 * 60_000;

/** 30 s, doubling per failure, at most 30 min: three attempts in the first three minutes of an outage. */
export const retryDelayMs = (failedAttempts: number): number => Math.min(BASE_MS * 2 ** Math.max(0, failedAttempts - 1), MAX_MS);

/** How long until the next attempt may go to the server; undefined when it may go now. */
export function waitBeforeRetry(s: RetryState | undefined, now: number): number | undefined {
  if (!s?.failedAttempts || !s.lastFailureTime) return undefined;
  const backoffEnds = Date.parse(s.lastFailureTime) + retryDelayMs(s.failedAttempts);
  const at = Math.max(backoffEnds, s.retryAt ? Date.parse(s.retryAt) : 0);
  return at > now ? at - now : undefined;
}

/**
 * One more failure, recorded: the status fields to write, the message (saying when the next
 * attempt is), and the requeue. `atLeastMs` is a server's Retry-After: it stretches the wait.
 */
export function recordFailure(
  s: RetryState | undefined,
  now: number,
  message: string,
  atLeastMs = 0,
): { fields: RetryState & Required<Pick<RetryState, 'failedAttempts' | 'lastFailureTime'>>; message: string; requeueAfter: number } {
  const failedAttempts = (s?.failedAttempts ?? 0) + 1;
  const backoff = retryDelayMs(failedAttempts);
  const requeueAfter = Math.max(backoff, atLeastMs);
  const next = new Date(now + requeueAfter);
  return {
    fields: {
      failedAttempts,
      lastFailureTime: rfc3339(new Date(now)),
      // Kept only when the server asked for longer than the backoff; cleared otherwise.
      retryAt: atLeastMs > backoff ? rfc3339(next) : undefined,
    },
    message: `${message}; retrying at ${next.toISOString()}`,
    requeueAfter,
  };
}

/** Fields that clear the record once the server answered. */
export const RETRY_CLEARED: RetryState = { failedAttempts: undefined, lastFailureTime: undefined, retryAt: undefined };

/**
 * Where an object's retry record lives. opkit's CRDs have the status fields above; cert-manager's,
 * which cert-manager mode runs on, do not, and a write naming them is refused (strict field
 * validation). There the record is kept in this process's memory, by uid, as cert-manager keeps its
 * own: the backoff holds while the process runs, and a restart starts the count again.
 */
export class RetryRecords {
  private readonly memory = new Map<string, RetryState>();

  constructor(private readonly inStatus: boolean) {}

  /** The object's record. */
  of(o: { metadata: { uid?: string }; status?: RetryState }): RetryState | undefined {
    return this.inStatus ? o.status : this.memory.get(o.metadata.uid ?? '');
  }

  /** Keeps `state` (a failure's fields, or RETRY_CLEARED) as `o`'s record; returns the status fields to write with it. */
  fields(o: { metadata: { uid?: string } }, state: RetryState): RetryState {
    if (this.inStatus) return state;
    const uid = o.metadata.uid ?? '';
    if (state.failedAttempts) this.memory.set(uid, state);
    else this.memory.delete(uid);
    return {};
  }
}

/** The records of one controller, as the API mode keeps them (see RetryRecords). */
export const retryRecords = (api: { groups: { mode: string } }) => new RetryRecords(api.groups.mode === 'opkit');
