/** What a reconcile is about: level-based, so the reconciler reads current state itself. */
export interface Request {
  namespace?: string;
  name: string;
}

/**
 * What a reconciler returns:
 * - nothing / `{}`: done, until the next change;
 * - `{ requeueAfter: ms }`: run again after that long (renewals, polling an external system);
 * - `{ requeue: true }`: run again with the per-item backoff;
 * - `priority` with either: the priority of that run (default: the priority this one ran with;
 *   Priority.low for work that may wait behind users' edits, higher for work that must not);
 * - a thrown error: logged with its stack, counted, retried with backoff (5 ms doubling to 2 min),
 *   and from its second time in a row reported on the object (Event, and the error condition);
 * - a thrown `TerminalError`: logged and counted, not retried until the object changes.
 */
export type Result = void | undefined | { requeue?: boolean; requeueAfter?: number; priority?: number };

/** An error retrying cannot fix (invalid input the object's author must change). */
export class TerminalError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TerminalError';
  }
}

export const requestKey = (r: Request): string => (r.namespace ? `${r.namespace}/${r.name}` : r.name);
