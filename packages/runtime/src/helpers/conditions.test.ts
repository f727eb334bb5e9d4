import { describe, expect, it } from 'vitest';
import { setCondition } from './conditions.js';

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
