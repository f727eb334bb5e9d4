import { describe, expect, it } from 'vitest';
import { FakeClock } from '../clock/clock.js';
import { ApiError, ConnectionError } from './errors.js';
import { retryTransient } from './retry.js';

describe('retryTransient', () => {
  const reset = new ConnectionError('POST', '/x', new Error('socket hang up'));

  it('retries a dropped connection, a 5xx and a 429 with backoff until the call succeeds', async () => {
    const clock = new FakeClock(0);
    const answers: unknown[] = [reset, new ApiError('POST', '/x', 503, {}), new ApiError('POST', '/x', 429, {}), 'ok'];
    const waits: number[] = [];
    const done = retryTransient(
      async () => {
        const a = answers.shift();
        if (a instanceof Error) throw a;
        return a;
      },
      { clock, maxMs: 60_000, onRetry: (_, ms) => waits.push(ms) },
    );
    await clock.tick(10_000);
    expect(await done).toBe('ok');
    expect(waits).toEqual([500, 1_000, 2_000]);
  });

  it('throws at once what retrying cannot fix', async () => {
    const denied = new ApiError('POST', '/x', 403, { reason: 'Forbidden' });
    await expect(retryTransient(() => Promise.reject(denied), { clock: new FakeClock(0), maxMs: 60_000 })).rejects.toBe(denied);
  });

  it('gives up with the last error once its time is up', async () => {
    const clock = new FakeClock(0);
    let calls = 0;
    const done = retryTransient(() => (calls++, Promise.reject(reset)), { clock, maxMs: 3_000 });
    const caught = done.catch((e: unknown) => e);
    await clock.tick(10_000);
    expect(await caught).toBe(reset);
    expect(calls).toBe(3); // at 0, 0.5 s and 1.5 s; the next (at 3.5 s) is past the limit
  });
});
