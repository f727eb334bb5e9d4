import { describe, expect, it } from 'vitest';
import { heartbeatDue, onOccurrence, type SeriesState } from './series.js';

const FINISH = 6 * 60_000;
const HEARTBEAT = 30 * 60_000;
const state = (count: number, written: number, last: number, lastWrite = last): SeriesState => ({
  name: 'e',
  namespace: 'ns',
  count,
  written,
  last,
  lastWrite,
});

describe('onOccurrence', () => {
  it.each([
    ['the first: a new Event', undefined, 0, { write: 'create' }],
    ['the second soon after: a series, written now', state(1, 1, 0), 60_000, { write: 'series-now', count: 2 }],
    ['the third: counted, written by the heartbeat', state(2, 2, 60_000), 90_000, { write: 'later', count: 3 }],
    ['after the series ended: a new Event', state(9, 9, 0), FINISH, { write: 'create' }],
  ] as const)('%s', (_, prev, now, want) => expect(onOccurrence(prev, now, FINISH)).toEqual(want));
});

describe('heartbeatDue', () => {
  it.each([
    ['nothing new', state(3, 3, 0), HEARTBEAT, false],
    ['new, within the heartbeat and the series', state(5, 3, 60_000, 0), 120_000, false],
    ['new, a heartbeat after the last write', state(5, 3, HEARTBEAT - 1, 0), HEARTBEAT, true],
    ['new, the series ended', state(5, 3, 60_000, 60_000), 60_000 + FINISH, true],
  ] as const)('%s', (_, s, now, want) => expect(heartbeatDue(s, now, HEARTBEAT, FINISH)).toBe(want));
});
