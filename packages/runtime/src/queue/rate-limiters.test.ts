import { describe, expect, it } from 'vitest';
import { defaultControllerRateLimiter, DEFAULT_MAX_ITEM_BACKOFF_MS, ItemExponentialRateLimiter } from './rate-limiters.js';

describe('rate limiters', () => {
  it("doubles an item's delay from 5 ms and forgets it after a success", () => {
    const l = new ItemExponentialRateLimiter(5, 1_000);
    expect([1, 2, 3, 4].map(() => l.when('a'))).toEqual([5, 10, 20, 40]);
    l.forget('a');
    expect(l.when('a')).toBe(5);
  });

  it('caps the default per-item backoff at two minutes, so a fixed cause is retried within that', () => {
    const l = defaultControllerRateLimiter();
    let last = 0;
    for (let i = 0; i < 40; i++) last = l.when('persistently-failing');
    expect(DEFAULT_MAX_ITEM_BACKOFF_MS).toBe(120_000);
    expect(last).toBe(120_000);
  });
});
