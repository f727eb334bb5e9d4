import type { Client } from '../client/client.js';

/**
 * What fences one reconcile: a signal aborted when the controller's term ends (a lost lease, a
 * shutdown) or when the reconcile outlives its timeout, and the client it fences, which sends
 * nothing after that. Both are made on first use: most reconciles (every no-op resync) only read
 * the cache, and an AbortSignal listening on the term cost them more than the rest of their work
 * (bench/runtime/reconcile-throughput, cache read only).
 */
export class ReconcileFence {
  private controller?: AbortController;
  private fenced?: Client;
  private ended = false;
  private reason: unknown;
  private readonly onTermEnd = () => this.abort(this.term.reason);

  constructor(
    private readonly term: AbortSignal,
    private readonly base: Client,
  ) {}

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.ended) this.controller.abort(this.reason);
      else if (this.term.aborted) this.abort(this.term.reason);
      else this.term.addEventListener('abort', this.onTermEnd, { once: true });
    }
    return this.controller.signal;
  }

  get client(): Client {
    return (this.fenced ??= this.base.withSignal(this.signal));
  }

  /** Ends the reconcile's mandate: its signal aborts now, or the moment it is first asked for. */
  abort(reason: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.reason = reason;
    this.controller?.abort(reason);
  }

  /** The reconcile returned: stop listening to the term. */
  dispose(): void {
    if (this.controller) this.term.removeEventListener('abort', this.onTermEnd);
  }
}
