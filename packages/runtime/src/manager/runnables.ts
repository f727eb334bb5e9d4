import type { Logger } from 'pino';

/** Anything the manager starts and stops besides controllers. */
export interface Runnable {
  name: string;
  /** Runs only on the elected leader (default true, as controllers). */
  needLeaderElection?: boolean;
  start(signal: AbortSignal): void | Promise<void>;
  stop?(): void | Promise<void>;
}

/**
 * Runnables started and stopped together: those that run on every replica for the manager's life,
 * and those that run for each leadership term. A runnable that fails to stop is logged; the others
 * still stop.
 */
export class RunnableGroup {
  private readonly items: Runnable[] = [];

  constructor(private readonly log: Logger) {}

  add(r: Runnable): void {
    this.items.push(r);
  }

  async start(signal: AbortSignal): Promise<void> {
    for (const r of this.items) await r.start(signal);
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.items.map((r) =>
        Promise.resolve()
          .then(() => r.stop?.())
          .catch((err: unknown) => this.log.warn({ err, runnable: r.name }, 'runnable failed to stop')),
      ),
    );
  }
}
