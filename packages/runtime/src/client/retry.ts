import type { Clock } from '../clock/clock.js';
import { isTransient } from './errors.js';

/**
 * Calls `fn` until it succeeds, retrying only what retrying can fix (a dropped connection, a 5xx,
 * a 429: isTransient) with backoff (0.5 s doubling to 10 s), for at most `maxMs`. Anything else,
 * or the last transient error once the time is up, is thrown. For the few requests an operator
 * makes outside its watches and reconciles (checks at start), which have no queue to retry them.
 */
export async function retryTransient<T>(
  fn: () => Promise<T>,
  o: { clock: Clock; maxMs: number; signal?: AbortSignal; onRetry?: (err: Error, inMs: number) => void },
): Promise<T> {
  const deadline = o.clock.monotonic() + o.maxMs;
  for (let delay = 500; ; delay = Math.min(delay * 2, 10_000)) {
    try {
      return await fn();
    } catch (err) {
      if (!isTransient(err) || o.signal?.aborted || o.clock.monotonic() + delay > deadline) throw err;
      o.onRetry?.(err as Error, delay);
      await o.clock.sleep(delay, o.signal);
    }
  }
}
