import { describe, expect, it } from 'vitest';
import { Backoff } from './backoff.js';

describe('Backoff', () => {
  it('doubles from the initial delay to the cap, jittered by ±50%, and resets', () => {
    const mid = new Backoff(800, 30_000, () => 0.5);
    expect([1, 2, 3, 4, 5, 6, 7].map(() => mid.next())).toEqual([800, 1600, 3200, 6400, 12800, 25600, 30000]);
    mid.reset();
    expect(mid.next()).toBe(800);
    const low = new Backoff(800, 30_000, () => 0);
    expect(low.next()).toBe(400);
    const high = new Backoff(800, 30_000, () => 0.999);
    expect(high.next()).toBeCloseTo(1199.2);
  });
});
