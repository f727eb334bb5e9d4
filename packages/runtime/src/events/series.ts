/**
 * When one event repeats, what the events.k8s.io/v1 recorder writes (client-go's `tools/events`
 * semantics, the decision alone, table-tested in series.test.ts):
 * - the first occurrence creates an Event;
 * - the second within `finishMs` of the one before begins a series: `series.count` 2, written now;
 * - later ones within `finishMs` are counted, and the count is written by a heartbeat at most every
 *   `heartbeatMs` (so a flood costs the API server one write per heartbeat, not one per repeat);
 * - an occurrence `finishMs` or more after the previous one starts over with a new Event.
 */
export interface SeriesState {
  /** The Event written for this occurrence's key. */
  name: string;
  namespace: string;
  /** Occurrences so far (1 before a series). */
  count: number;
  /** The count the API server has. */
  written: number;
  last: number;
  lastWrite: number;
}

export type SeriesStep = { write: 'create' } | { write: 'series-now'; count: number } | { write: 'later'; count: number };

export function onOccurrence(prev: SeriesState | undefined, now: number, finishMs: number): SeriesStep {
  if (!prev || now - prev.last >= finishMs) return { write: 'create' };
  const count = prev.count + 1;
  return prev.written < 2 ? { write: 'series-now', count } : { write: 'later', count };
}

/** Whether a heartbeat at `now` writes the series: its count moved, and a heartbeat has passed since the last write (or it ended). */
export function heartbeatDue(s: SeriesState, now: number, heartbeatMs: number, finishMs: number): boolean {
  return s.count > s.written && (now - s.lastWrite >= heartbeatMs || now - s.last >= finishMs);
}
