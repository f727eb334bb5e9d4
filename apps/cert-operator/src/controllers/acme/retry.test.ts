import { describe, expect, it } from 'vitest';
import { recordFailure, RETRY_CLEARED, RetryRecords, retryDelayMs, waitBeforeRetry } from './retry.js';

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

  // The Retry-After was only the next requeue: the operator's own status write reconciled the
  // object again, and 30 s later the recorded backoff let it through, so a 429 with
  // Retry-After: 3600 was retried after 30 s, 90 s, 210 s...
  it("holds every attempt back until a server's Retry-After has passed, whoever reconciles and after a restart", () => {
    const limited = recordFailure(undefined, T0, 'rate limited', 3_600_000);
    expect(limited.fields.retryAt).toBe('2026-11-23T11:00:00Z');
    expect(limited.message).toBe('rate limited; retrying at 2026-11-23T11:00:00.000Z');
    expect(waitBeforeRetry(limited.fields, T0 + 31_000)).toBe(3_600_000 - 31_000);
    expect(waitBeforeRetry(limited.fields, T0 + 3_600_000)).toBeUndefined();
    // The next failure without one waits its own backoff, from then.
    const next = recordFailure(limited.fields, T0 + 3_600_000, 'unreachable');
    expect(waitBeforeRetry(next.fields, T0 + 3_600_000 + 1_000)).toBe(59_000);
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

describe('RetryRecords: where the record lives', () => {
  const failure = { failedAttempts: 2, lastFailureTime: '2026-11-26T12:00:00Z' };
  it('opkit mode: in status, written with the status', () => {
    const r = new RetryRecords(true);
    const o = { metadata: { uid: 'u' }, status: failure };
    expect(r.of(o)).toBe(failure);
    expect(r.fields(o, failure)).toEqual(failure);
    expect(r.fields(o, RETRY_CLEARED)).toEqual(RETRY_CLEARED);
  });
  it("cert-manager mode: in memory by uid, nothing for the status (cert-manager's CRDs have no such fields)", () => {
    const r = new RetryRecords(false);
    const o = { metadata: { uid: 'u' }, status: {} };
    expect(r.of(o)).toBeUndefined();
    expect(r.fields(o, failure)).toEqual({});
    expect(r.of(o)).toEqual(failure);
    expect(waitBeforeRetry(r.of(o), Date.parse(failure.lastFailureTime) + 1_000)).toBe(59_000);
    expect(r.of({ metadata: { uid: 'other' } })).toBeUndefined();
    expect(r.fields(o, RETRY_CLEARED)).toEqual({});
    expect(r.of(o)).toBeUndefined();
  });
});
