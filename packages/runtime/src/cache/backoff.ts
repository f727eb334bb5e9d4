/**
 * Exponential backoff with jitter: each delay doubles up to `max`, then a random factor in
 * [0.5, 1.5) spreads reconnecting clients so a restarted API server is not hit all at once.
 */
export class Backoff {
  private attempt = 0;

  constructor(
    readonly initialMs: number,
    readonly maxMs: number,
    private readonly random: () => number = Math.random,
  ) {}

  next(): number {
    const base = Math.min(this.maxMs, this.initialMs * 2 ** this.attempt);
    this.attempt++;
    return Math.min(this.maxMs, base * (0.5 + this.random()));
  }

  reset(): void {
    this.attempt = 0;
  }
}
