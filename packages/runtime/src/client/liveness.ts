import type { Logger } from 'pino';
import { systemClock, type Clock } from '../clock/clock.js';
import type { Transport } from './transport.js';

export interface LivenessOptions {
  /** Time between the end of one probe and the next. Default 5 s. */
  intervalMs?: number;
  /** A probe with no answer by then fails. Default 5 s. */
  timeoutMs?: number;
  /** What the probe asks for: any HTTP answer counts. Default `/livez`, which every identity may read. */
  path?: string;
  /** Called when the API server stops answering (once per outage). */
  onUnresponsive?(): void;
  /** Called when it answers again after an outage. */
  onRecovered?(): void;
  clock?: Clock;
}

/**
 * Asks the API server, every few seconds, whether it answers at all. HTTP/1.1 has no ping, and a
 * stopped or partitioned API server leaves every open connection (watches included) silent rather
 * than closed: without this the only sign is a watch's inactivity timeout, minutes later. A probe
 * with no answer within its timeout marks the server unresponsive at once (so /readyz turns red
 * within interval + timeout, 10 s by default) and drops every connection so that they are rebuilt;
 * the first answer afterwards marks it responsive again.
 */
export class ApiServerLiveness {
  private responsive = true;
  /** When the API server last answered. */
  private answeredAt: number;
  private lastError?: string;
  private readonly abort = new AbortController();
  private loop?: Promise<void>;
  private readonly clock: Clock;

  constructor(
    private readonly transport: Transport,
    private readonly log: Logger,
    private readonly options: LivenessOptions = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.answeredAt = this.clock.now();
  }

  /** `true`, or why the API server counts as unresponsive (for a readiness check). */
  status(): true | string {
    if (this.responsive) return true;
    return `no answer from the API server for ${Math.round((this.clock.now() - this.answeredAt) / 1000)}s (${this.lastError ?? 'unknown'})`;
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
  }

  private async run(): Promise<void> {
    const interval = this.options.intervalMs ?? 5_000;
    const timeout = this.options.timeoutMs ?? 5_000;
    const path = this.options.path ?? '/livez';
    while (!this.abort.signal.aborted) {
      await this.clock.sleep(interval, this.abort.signal);
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- aborted while awaiting: TS keeps the narrowing from before the await (TypeScript#9998)
      if (this.abort.signal.aborted) break;
      try {
        await this.transport.probe(path, timeout);
        const silentMs = this.clock.now() - this.answeredAt;
        this.answeredAt = this.clock.now();
        if (!this.responsive) {
          this.log.info({ silentForMs: silentMs }, 'the API server answers again');
          this.responsive = true;
          this.options.onRecovered?.();
        }
      } catch (err) {
        this.lastError = (err as Error).message;
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- aborted while awaiting: TS keeps the narrowing from before the await (TypeScript#9998)
        if (this.abort.signal.aborted) break;
        if (this.responsive) {
          this.log.warn({ err: this.lastError }, 'the API server does not answer: dropping every connection to it');
          this.responsive = false;
          this.options.onUnresponsive?.();
        }
      }
    }
  }
}
