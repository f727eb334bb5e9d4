/**
 * Time, read one way and injected: every part of the runtime that waits, measures or decides by
 * time asks a Clock, so a fake one drives the state tables and a test can step the wall clock.
 *
 * Two kinds of time, never mixed:
 * - **wall** (`now()`): milliseconds since the epoch, as the machine's clock says. It can jump
 *   (NTP, a suspended VM, an operator's `date -s`). Only for what is written to the API or compared
 *   with a time someone else wrote: a Lease's `renewTime`, a condition's `lastTransitionTime`, a
 *   certificate's validity.
 * - **monotonic** (`monotonic()`, `sleep`, `setTimer`): milliseconds from an arbitrary origin that
 *   only moves forward at the rate of real time. Every duration, deadline, delay, backoff, TTL and
 *   lease expiry is measured on it, so a wall-clock step changes none of them.
 */
export interface Clock {
  /** Wall time: milliseconds since the epoch. */
  now(): number;
  /** Monotonic time in milliseconds, from an arbitrary origin. */
  monotonic(): number;
  /** Resolves after `ms` of monotonic time, or as soon as `signal` aborts (never rejects). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Calls `fn` once after `ms` of monotonic time, unless cancelled. Never keeps the process alive. */
  setTimer(ms: number, fn: () => void): Timer;
}

export interface Timer {
  cancel(): void;
}

/** setTimeout fires at once for delays over 2^31-1 ms (~24.8 days): longer timers re-arm. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

function systemTimer(ms: number, fn: () => void, ref: boolean): Timer {
  let handle: NodeJS.Timeout;
  if (ms <= MAX_TIMEOUT_MS) {
    // The common case, on hot paths (a reconcile's timeout): one timer, nothing else.
    handle = setTimeout(fn, Math.max(0, ms));
    if (!ref) handle.unref();
    return { cancel: () => clearTimeout(handle) };
  }
  const due = performance.now() + ms;
  const arm = () => {
    const left = due - performance.now();
    handle = setTimeout(left > MAX_TIMEOUT_MS ? arm : fn, Math.min(MAX_TIMEOUT_MS, Math.max(0, left)));
    if (!ref) handle.unref();
  };
  arm();
  return { cancel: () => clearTimeout(handle) };
}

/**
 * A sleep that an abort ends early. The abort listener is removed when the timer fires: a loop that
 * sleeps on a long-lived signal must not leave one listener behind per turn (Node warns at 11).
 * It holds the process open, as any awaited wait should.
 */
export function sleep(ms: number, signal?: AbortSignal, clock: Clock = systemClock): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      timer.cancel();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = clock === systemClock ? systemTimer(ms, done, true) : clock.setTimer(ms, done);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** The machine's clocks: `Date.now()` for wall time, `performance.now()` (and Node's timers, which run on it) for the rest. */
export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  sleep: (ms, signal) => sleep(ms, signal, systemClock),
  setTimer: (ms, fn) => systemTimer(ms, fn, false),
};

/**
 * A clock that moves only when told: `advance(ms)` moves both times and fires the timers that fall
 * due, in order; `stepWall(ms)` moves the wall clock alone, as NTP or `date -s` does, and fires
 * nothing. For table tests of time-driven state, and for the clock-step tests.
 */
export class FakeClock implements Clock {
  private wall: number;
  private mono = 0;
  private seq = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();

  constructor(start: number | Date = Date.UTC(2026, 0, 1)) {
    this.wall = typeof start === 'number' ? start : start.getTime();
  }

  now(): number {
    return this.wall;
  }

  monotonic(): number {
    return this.mono;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleep(ms, signal, this);
  }

  setTimer(ms: number, fn: () => void): Timer {
    const id = this.seq++;
    this.timers.set(id, { at: this.mono + Math.max(0, ms), fn });
    return { cancel: () => this.timers.delete(id) };
  }

  /** Timers waiting to fire. */
  get pending(): number {
    return this.timers.size;
  }

  /** Moves both clocks forward by `ms`, firing every timer that falls due (each at its own time). */
  advance(ms: number): void {
    const end = this.mono + ms;
    for (let at = this.nextDue(end); at !== undefined; at = this.nextDue(end)) {
      this.wall += at - this.mono;
      this.mono = at;
      for (const [id, t] of this.timers) {
        if (t.at !== at) continue;
        this.timers.delete(id);
        t.fn();
      }
    }
    this.wall += end - this.mono;
    this.mono = end;
  }

  /**
   * `advance`, letting awaited work run: time moves to each timer in turn, and after each (and at
   * the end) pending promise callbacks settle, so a loop that wakes and sleeps again keeps up.
   */
  async tick(ms: number): Promise<void> {
    const end = this.mono + ms;
    await settle();
    for (;;) {
      const next = this.nextDue(end);
      if (next === undefined) break;
      this.advance(next - this.mono);
      await settle();
    }
    this.advance(end - this.mono);
    await settle();
  }

  private nextDue(end: number): number | undefined {
    let at: number | undefined;
    for (const t of this.timers.values()) if (t.at <= end && (at === undefined || t.at < at)) at = t.at;
    return at;
  }

  /** Steps the wall clock alone (negative: back). Durations, timers and deadlines do not move. */
  stepWall(ms: number): void {
    this.wall += ms;
  }
}

/** Lets queued promise callbacks and immediates run. */
export const settle = (): Promise<void> => new Promise((r) => setImmediate(r));
