import { describe, expect, it } from 'vitest';
import { setCondition, settleMessage } from './conditions.js';

describe('setCondition', () => {
  const t0 = new Date('2026-01-01T00:00:00.000Z');
  const t1 = new Date('2026-01-01T01:00:00.000Z');

  it('moves lastTransitionTime only when the status changes', () => {
    let c = setCondition(undefined, { type: 'Ready', status: 'False', reason: 'Deploying', message: 'waiting', observedGeneration: 1 }, t0);
    expect(c[0]?.lastTransitionTime).toBe('2026-01-01T00:00:00Z');
    c = setCondition(c, { type: 'Ready', status: 'False', reason: 'StillDeploying', message: 'waiting more', observedGeneration: 2 }, t1);
    expect(c[0]).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'StillDeploying',
      message: 'waiting more',
      observedGeneration: 2,
      lastTransitionTime: '2026-01-01T00:00:00Z',
    });
    c = setCondition(c, { type: 'Ready', status: 'True', reason: 'Available', message: 'ok' }, t1);
    expect(c[0]?.lastTransitionTime).toBe('2026-01-01T01:00:00Z');
  });

  it('keeps other conditions and their order', () => {
    let c = setCondition([], { type: 'A', status: 'True', reason: 'r', message: '' }, t0);
    c = setCondition(c, { type: 'B', status: 'True', reason: 'r', message: '' }, t0);
    c = setCondition(c, { type: 'A', status: 'False', reason: 'r', message: '' }, t1);
    expect(c.map((x) => `${x.type}=${x.status}`)).toEqual(['A=False', 'B=True']);
  });

  it('is idempotent: the same input yields an identical list (no status write)', () => {
    const once = setCondition([], { type: 'A', status: 'True', reason: 'r', message: 'm' }, t0);
    expect(setCondition(once, { type: 'A', status: 'True', reason: 'r', message: 'm' }, t1)).toEqual(once);
  });
});

describe('settleMessage', () => {
  const at = Date.parse('2026-11-27T12:00:00Z');
  const prev = { status: 'True' as const, reason: 'Renewing', message: 'started', lastTransitionTime: '2026-11-27T12:00:00Z', observedGeneration: 3 };
  const next = { type: 'Issuing', status: 'True' as const, reason: 'Renewing', message: 'step 2', observedGeneration: 3 };
  const cases: [string, Parameters<typeof settleMessage>[0], Partial<typeof next>, number, { message: string; recheckAfterMs?: number }][] = [
    ['a new condition is written', undefined, {}, 0, { message: 'step 2' }],
    ['a message-only change inside the quiet period is held', prev, {}, 4_000, { message: 'started', recheckAfterMs: 6_000 }],
    ['held until the very end of it', prev, {}, 9_999, { message: 'started', recheckAfterMs: 1 }],
    ['written once the quiet period is over', prev, {}, 10_000, { message: 'step 2' }],
    ['a change of reason is never held', prev, { reason: 'Failed' }, 1_000, { message: 'step 2' }],
    ['a change of status is never held', prev, { status: 'False' as never }, 1_000, { message: 'step 2' }],
    ['a new generation is never held', prev, { observedGeneration: 4 }, 1_000, { message: 'step 2' }],
    ['the same message needs no recheck', prev, { message: 'started' }, 1_000, { message: 'started' }],
    ['an unreadable transition time holds nothing', { ...prev, lastTransitionTime: 'garbage' }, {}, 1_000, { message: 'step 2' }],
  ];
  it.each(cases)('%s', (_name, before, change, afterMs, want) => {
    const got = settleMessage(before, { ...next, ...change }, at + afterMs, 10_000);
    expect({ message: got.condition.message, ...(got.recheckAfterMs !== undefined ? { recheckAfterMs: got.recheckAfterMs } : {}) }).toEqual(want);
    expect(got.condition.reason).toBe({ ...next, ...change }.reason);
  });
});
