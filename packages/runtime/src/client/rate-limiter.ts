import { systemClock, type Clock } from '../clock/clock.js';

/**
 * Client-side QPS/burst, as client-go's token bucket. Off by default (qps <= 0), as in
 * controller-runtime >= 0.21: API Priority and Fairness protects the server, and 429s with
 * Retry-After are honoured by the transport.
 */
export class TokenBucket {
  private tokens: number;
  private last: number;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    readonly qps: number,
    readonly burst: number,
    private readonly clock: Clock = systemClock,
  ) {
    this.tokens = burst;
    this.last = clock.monotonic();
  }

  get enabled(): boolean {
    return this.qps > 0;
  }

  private refill(now: number) {
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
  }

  /** Resolves when a token is available; callers are served in order. */
  take(): Promise<void> {
    if (!this.enabled) return Promise.resolve();
    const next = this.queue.then(async () => {
      this.refill(this.clock.monotonic());
      if (this.tokens < 1) {
        await this.clock.sleep(((1 - this.tokens) / this.qps) * 1000);
        this.refill(this.clock.monotonic());
      }
      this.tokens -= 1;
    });
    this.queue = next;
    return next;
  }

  /** Non-blocking: how long until a token would be free, consuming it (used by the work queue). */
  reserve(now = this.clock.monotonic()): number {
    if (!this.enabled) return 0;
    this.refill(now);
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }
}
