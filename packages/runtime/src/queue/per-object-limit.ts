/**
 * At most `reconciles` reconciles of one key per `perMs` (a sliding window on monotonic time), as
 * java-operator-sdk's per-resource rate limiter: an object that requeues itself in a tight loop, or
 * that another writer changes without pause, costs at most that much. `delay` says how long a key
 * handed out now must wait; `started` records a reconcile.
 */
export class PerObjectLimit {
  private readonly starts = new Map<string, number[]>();
  private calls = 0;

  constructor(
    private readonly reconciles: number,
    private readonly perMs: number,
  ) {
    if (!(reconciles >= 1) || !(perMs > 0))
      throw new Error(`perObjectRateLimit: reconciles must be at least 1 and perMs above 0 (got ${reconciles} per ${perMs} ms)`);
  }

  delay(key: string, now: number): number {
    const recent = this.recent(key, now);
    return recent.length < this.reconciles ? 0 : recent[0]! + this.perMs - now;
  }

  started(key: string, now: number): void {
    const recent = this.recent(key, now);
    recent.push(now);
    this.starts.set(key, recent);
    // Now and then forget keys that have been quiet for a whole window (deleted objects included).
    if (++this.calls % 1024 === 0) for (const [k, s] of this.starts) if (s[s.length - 1]! <= now - this.perMs) this.starts.delete(k);
  }

  private recent(key: string, now: number): number[] {
    return (this.starts.get(key) ?? []).filter((t) => t > now - this.perMs);
  }
}
