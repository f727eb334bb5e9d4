import { ApiError, isConflict, isForbidden } from '../client/errors.js';
import { TerminalError, type Result } from './result.js';

/** How one reconcile attempt ended. */
export type AttemptOutcome =
  | { kind: 'returned'; result: Result }
  | { kind: 'threw'; error: unknown }
  /** Still running past its timeout: its worker is free, its key is not (see ReconcileAttempt). */
  | { kind: 'timedOut'; timeoutMs: number };

/** What the queue, the metrics, the log and the object hear of an outcome. */
export interface Decision {
  queue:
    /** Done: the key's failure history is cleared. */
    | { action: 'forget' }
    /** Done for now, again after `ms` (the reconciler asked), history cleared. */
    | { action: 'after'; ms: number }
    /** Again after the key's backoff, at least `floorMs`. */
    | { action: 'backoff'; floorMs?: number }
    /** Nothing: the term is over. */
    | { action: 'none' };
  /** The `result` label of controller_runtime_reconcile_total. */
  result: 'success' | 'error' | 'requeue' | 'requeue_after';
  /** Put the failure on the object: now, once it repeats, or not at all. */
  report: 'now' | 'when-persistent' | 'no';
  log: 'none' | 'interrupted' | 'terminal' | 'conflict' | 'timeout' | 'error';
  /** The API refused a permission: the key is also retried as soon as the permission is granted. */
  denied: boolean;
}

/**
 * A permission failure is not fixed by retrying but by someone changing a role; the denied
 * permission is watched (DeniedPermissions) and the key retried within seconds of that. Quick
 * retries meanwhile only send requests the API server refuses: start them a second apart.
 */
export const FORBIDDEN_BACKOFF_FLOOR_MS = 1_000;

const decide = (queue: Decision['queue'], result: Decision['result'], report: Decision['report'], log: Decision['log'], denied = false): Decision => ({
  queue,
  result,
  report,
  log,
  denied,
});

/** One pure table from an attempt's outcome to what happens next (`outcome.test.ts` holds its rows). */
export function classify(outcome: AttemptOutcome, termEnded: boolean): Decision {
  if (outcome.kind === 'returned') {
    const r = outcome.result;
    if (r && r.requeueAfter && r.requeueAfter > 0) return decide({ action: 'after', ms: r.requeueAfter }, 'requeue_after', 'no', 'none');
    if (r && r.requeue) return decide({ action: 'backoff' }, 'requeue', 'no', 'none');
    return decide({ action: 'forget' }, 'success', 'no', 'none');
  }
  // The term ended under it (lease lost, shutdown): not the object's fault, nothing to report.
  if (termEnded) return decide({ action: 'none' }, 'error', 'no', 'interrupted');
  if (outcome.kind === 'timedOut') return decide({ action: 'backoff' }, 'error', 'when-persistent', 'timeout');
  const err = outcome.error;
  if (err instanceof TerminalError) return decide({ action: 'forget' }, 'error', 'now', 'terminal');
  // Routine under optimistic concurrency: the retry reads fresh state.
  if (isConflict(err)) return decide({ action: 'backoff' }, 'error', 'no', 'conflict');
  if (isForbidden(err)) return decide({ action: 'backoff', floorMs: FORBIDDEN_BACKOFF_FLOOR_MS }, 'error', 'when-persistent', 'error', err instanceof ApiError);
  return decide({ action: 'backoff' }, 'error', 'when-persistent', 'error');
}
