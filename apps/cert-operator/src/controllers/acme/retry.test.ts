import { describe, expect, it } from 'vitest';
import { recordFailure, retryDelayMs, waitBeforeRetry } from './retry.js';

const T0 = Date.parse('2026-11-23T10:00:00Z');

describe('ACME retries recorded in status', () => {
  it('waits 30 s, then doubles, up to 30 min', () => {
    expect([1, 2, 3, 4, 7, 20].map(retryDelayMs)).toEqual([30_000, 60_000, 120_000, 240_000, 1_800_000, 1_800_000]);
  });

  it("holds attempts back until the recorded failure's delay has passed, whoever reconciles", () => {
    const first = recordFailure(undefined, T0, 'unreachable');
    expect(first.fields).toEqual({ failedAttempts: 1, lastFailureTime: '2026-11-23T10:00:00Z' });
    expect(first.message).toBe('unreachable; retrying at 2026-11-23T10:00:30.000Z');
    expect(waitBeforeRetry(first.fields, T0 + 100)).toBe(29_900);
    expect(waitBeforeRetry(first.fields, T0 + 30_000)).toBeUndefined();
    const second = recordFailure(first.fields, T0 + 30_000, 'unreachable');
    expect(waitBeforeRetry(second.fields, T0 + 31_000)).toBe(59_000);
  });

  it("lets a server's Retry-After stretch the wait, never shorten it", () => {
    expect(recordFailure(undefined, T0, 'rate limited', 120_000).requeueAfter).toBe(120_000);
    expect(recordFailure(undefined, T0, 'rate limited', 1_000).requeueAfter).toBe(30_000);
  });

  it('over three minutes of an outage, at most three attempts', () => {
    let s = undefined as ReturnType<typeof recordFailure>['fields'] | undefined;
    let attempts = 0;
    for (let t = T0; t < T0 + 180_000; t += 1_000) {
      if (waitBeforeRetry(s, t) !== undefined) continue;
      attempts++;
      s = recordFailure(s, t, 'unreachable').fields;
    }
    expect(attempts).toBe(3);
  });
});
