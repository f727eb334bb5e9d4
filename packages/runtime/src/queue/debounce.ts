import type { Clock, Timer } from '../clock/clock.js';

/**
 * Merges a burst of events for one key into one: the key is released once no event has come for
 * `quietMs`, and at the latest `maxWaitMs` after the burst's first event (a key written to without
 * pause is still reconciled). The highest priority seen in the burst goes with it.
 */
export class Debouncer {
  private readonly pending = new Map<string, { first: number; priority: number; timer: Timer }>();

  constructor(
    private readonly clock: Clock,
    private readonly quietMs: number,
    private readonly maxWaitMs: number,
    private readonly release: (key: string, priority: number) => void,
  ) {}

  get size(): number {
    return this.pending.size;
  }

  push(key: string, priority: number): void {
    const now = this.clock.monotonic();
    const p = this.pending.get(key);
    p?.timer.cancel();
    const first = p?.first ?? now;
    const top = Math.max(p?.priority ?? priority, priority);
    const wait = Math.max(0, Math.min(this.quietMs, first + this.maxWaitMs - now));
    this.pending.set(key, { first, priority: top, timer: this.clock.setTimer(wait, () => this.fire(key)) });
  }

  private fire(key: string) {
    const p = this.pending.get(key);
    if (!p) return;
    this.pending.delete(key);
    this.release(key, p.priority);
  }

  /** Drops every pending key (the term ended: the next one replays everything anyway). */
  clear(): void {
    for (const p of this.pending.values()) p.timer.cancel();
    this.pending.clear();
  }
}
