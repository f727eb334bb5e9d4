/**
 * Time, injected: the runtime and the reconcilers ask a Clock, so time-driven decisions (renewal
 * windows, lease expiry, backoff, certificate renewal) can be tested without waiting.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms`, or as soon as `signal` aborts (never rejects). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/**
 * A sleep that an abort ends early. The abort listener is removed when the timer fires: a loop that
 * sleeps on a long-lived signal must not leave one listener behind per turn (Node warns at 11).
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    signal?.addEventListener('abort', done, { once: true });
  });
}

export const systemClock: Clock = { now: () => Date.now(), sleep };
