import { describe, expect, it } from 'vitest';
import { electorStep, initialElectorState, judgeLease, type ElectorEvent, type ElectorState, type LeaseSpecView } from './leader-election-state.js';

const timing = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };
const WALL = Date.parse('2026-06-01T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().replace('Z', '000Z');
const lease = (holder: string | undefined, renewedWall: number): LeaseSpecView => ({
  holderIdentity: holder,
  renewTime: iso(renewedWall),
  leaseDurationSeconds: 15,
});

describe('judgeLease', () => {
  it.each<[string, LeaseSpecView | undefined, number, ReturnType<typeof judgeLease>['verdict']]>([
    ['ours: renew it', lease('me', WALL - 1_000), 0, { verdict: 'mine' }],
    ['nobody holds it', { holderIdentity: undefined, renewTime: iso(WALL) }, 0, { verdict: 'free' }],
    ['no lease object yet', undefined, 0, { verdict: 'free' }],
    // Renewed 1.5 s ago by the holder's clock, within one retry period: trusted. Expires 13.5 s from now.
    ['held, renewed a moment ago', lease('other', WALL - 1_500), 0, { verdict: 'held', expiresAt: 100_000 - 1_500 + 15_000 }],
    // renewTime an hour in the future (the holder's clock stepped forward): we count from now, not from then.
    ['held, renewTime in the future', lease('other', WALL + 3_600_000), 0, { verdict: 'held', expiresAt: 100_000 + 15_000 }],
    // renewTime an hour in the past (their clock behind, or a dead leader seen for the first time): at most one retry period.
    ['held, renewTime far in the past', lease('other', WALL - 3_600_000), 0, { verdict: 'held', expiresAt: 100_000 - 2_000 + 15_000 }],
    [
      'an unreadable renewTime counts from now',
      { holderIdentity: 'other', renewTime: 'yesterday', leaseDurationSeconds: 15 },
      0,
      { verdict: 'held', expiresAt: 115_000 },
    ],
  ])('%s', (_, spec, __, verdict) => {
    expect(judgeLease(spec, 'me', undefined, { monotonic: 100_000, wall: WALL, timing }).verdict).toEqual(verdict);
  });

  it('expires a record that has not changed for the lease duration, by our monotonic clock alone', () => {
    const first = judgeLease(lease('other', WALL), 'me', undefined, { monotonic: 100_000, wall: WALL, timing });
    // Our wall clock steps an hour forward: the unchanged record keeps its observation time.
    const stepped = judgeLease(lease('other', WALL), 'me', first.observed, { monotonic: 110_000, wall: WALL + 3_600_000, timing });
    expect(stepped.verdict).toEqual({ verdict: 'held', expiresAt: 115_000 });
    expect(judgeLease(lease('other', WALL), 'me', first.observed, { monotonic: 115_000, wall: WALL - 3_600_000, timing }).verdict).toEqual({ verdict: 'free' });
  });

  it('sees a renewal as a changed record, and counts again from it', () => {
    const first = judgeLease(lease('other', WALL), 'me', undefined, { monotonic: 100_000, wall: WALL, timing });
    const renewed = judgeLease(lease('other', WALL + 10_000), 'me', first.observed, { monotonic: 110_000, wall: WALL + 10_000, timing });
    expect(renewed.verdict).toEqual({ verdict: 'held', expiresAt: 125_000 });
  });
});

/** Runs events at monotonic times; jitter 0. */
function run(events: [number, ElectorEvent][], from: ElectorState = initialElectorState()) {
  let state = from;
  const out = events.map(([monotonic, e]) => {
    const t = electorStep(state, e, { monotonic, jitter: 0, timing });
    state = t.state;
    return t;
  });
  return { state, out, last: out[out.length - 1]! };
}
const won: ElectorEvent = { type: 'attempted', outcome: 'won' };
const failed: ElectorEvent = { type: 'attempted', outcome: 'failed' };

describe('electorStep', () => {
  it('leads on winning, and renews a retry period on with the renew deadline as its bound', () => {
    const r = run([[1_000, won]]);
    expect(r.state).toMatchObject({ phase: 'leading', renewedAt: 1_000 });
    expect(r.last.effects).toEqual([{ effect: 'startedLeading' }]);
    expect(r.last.next).toEqual({ inMs: 2_000, deadlineAt: 11_000 });
  });

  it('waits for a held lease until it expires, if that comes before the next retry', () => {
    expect(run([[0, { type: 'attempted', outcome: 'held', expiresAt: 500 }]]).last.next).toEqual({ inMs: 510 });
    expect(run([[0, { type: 'attempted', outcome: 'held', expiresAt: 90_000 }]]).last.next).toEqual({ inMs: 2_000 });
    expect(run([[0, failed]]).last.next).toEqual({ inMs: 2_000 });
  });

  it('keeps retrying a failing renewal until the renew deadline, never past it', () => {
    const r = run([
      [0, won],
      [2_000, failed],
      [4_000, failed],
      [6_000, failed],
      [8_000, failed],
      [9_500, failed],
    ]);
    expect(r.state.phase).toBe('leading');
    expect(r.last.next).toEqual({ inMs: 500, deadlineAt: 10_000 });
  });

  it('gives up at the renew deadline: stops acting at once and stands again', () => {
    const r = run([
      [0, won],
      [2_000, failed],
      [10_000, failed],
    ]);
    expect(r.state.phase).toBe('candidate');
    expect(r.last.effects).toEqual([{ effect: 'stoppedLeading', reason: 'lost' }]);
    expect(r.last.next).toEqual({ inMs: 2_000 });
  });

  it('counts the deadline from the last success', () => {
    const r = run([
      [0, won],
      [2_000, won],
      [4_000, failed],
      [11_999, failed],
    ]);
    expect(r.state.phase).toBe('leading');
    expect(run([[12_000, failed]], r.state).state.phase).toBe('candidate');
  });

  it('stops: while leading it hands the lease over (releasable); as a candidate there is nothing to hand over', () => {
    const leading = run([
      [0, won],
      [100, { type: 'stop' }],
    ]);
    expect(leading.state).toMatchObject({ phase: 'stopped', releasable: true });
    expect(leading.last.effects).toEqual([{ effect: 'stoppedLeading', reason: 'stopped' }]);
    expect(leading.last.next).toBeUndefined();
    expect(run([[0, { type: 'stop' }]]).state).toMatchObject({ phase: 'stopped', releasable: false });
    expect(run([[200, won]], leading.state).last).toEqual({ state: leading.state, effects: [] });
  });

  it('steps down at once when its Lease was deleted while it led (a shard member removed from the ring), then stands again', () => {
    const gone: ElectorEvent = { type: 'attempted', outcome: 'gone' };
    const r = run([
      [0, won],
      [2_000, gone],
    ]);
    expect(r.state.phase).toBe('candidate');
    expect(r.last.effects).toEqual([{ effect: 'stoppedLeading', reason: 'lost' }]);
    expect(r.last.next!.inMs).toBeLessThanOrEqual(timing.retryPeriodMs * 1.2);
    // A candidate that finds no Lease simply makes one next time.
    expect(run([[0, gone]]).state.phase).toBe('candidate');
    expect(run([[0, gone]]).last.effects).toEqual([]);
  });
});
