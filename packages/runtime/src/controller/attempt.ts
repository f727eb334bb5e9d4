import type { Logger } from 'pino';
import type { Cache } from '../cache/cache.js';
import type { Clock } from '../clock/clock.js';
import type { Client } from '../client/client.js';
import type { EventRecorder } from '../events/recorder.js';
import type { Span, Tracer } from '../tracing/tracer.js';
import { ReconcileFence } from './fence.js';
import type { AttemptOutcome } from './outcome.js';
import type { Trigger } from './provenance.js';
import { reconcileContext, type ReconcileContext, type RecordedWrite, type WriteObserver } from './reconcile-context.js';
import type { ReferenceReader } from './reference-reader.js';
import type { Request, Result } from './result.js';

export type Reconciler = (req: Request, ctx: ReconcileContext) => Promise<Result> | Result;

/** The reconcile ran past its timeout. */
export class ReconcileTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`reconcile timed out after ${timeoutMs / 1000}s`);
    this.name = 'ReconcileTimeoutError';
  }
}

export interface AttemptDeps {
  reconciler: Reconciler;
  cache: Cache;
  client: Client;
  recorder: EventRecorder;
  references: ReferenceReader;
  clock: Clock;
  tracer?: Tracer;
  /** The controller's logger; the attempt's own child (with namespace, name, reconcileID) is made on first use. */
  log: Logger;
  writeObserver?: WriteObserver;
}

/**
 * One reconcile of one key: its context, its fence, its timeout, its writes. `run()` resolves at
 * the reconciler's return or at the timeout, whichever comes first, so a hung reconcile frees its
 * worker; `settled` resolves only when the reconciler itself has returned. Until then the key stays
 * in flight: a second reconcile of it never runs beside this one, even past the timeout, because
 * the fence stops Kubernetes writes, not an ACME order, a DNS update or an Event the first may
 * still be making.
 */
export class ReconcileAttempt {
  /** What the reconcile wrote, and what the cache must show before the key runs again. */
  readonly writes: RecordedWrite[] = [];
  /** Resolves when the reconciler has returned (or thrown), timed out or not. */
  settled: Promise<void> = Promise.resolve();
  /** Past its timeout and still running. */
  timedOut = false;
  private child?: Logger;

  constructor(
    private readonly deps: AttemptDeps,
    readonly req: Request,
    readonly reconcileId: string,
    readonly triggers: readonly Trigger[],
    private readonly term: AbortSignal,
    private readonly timeoutMs: number,
    private readonly span?: Span,
  ) {}

  /**
   * The attempt's logger, made when first used: most reconciles log nothing at the default level,
   * and a pino child costs them more than their own work (bench/runtime/reconcile-throughput).
   */
  get log(): Logger {
    return (this.child ??= this.deps.log.child({ namespace: this.req.namespace, name: this.req.name, reconcileID: this.reconcileId }));
  }

  run(): Promise<AttemptOutcome> {
    const { deps } = this;
    const fence = new ReconcileFence(this.term, deps.client);
    const log = () => this.log;
    const ctx = reconcileContext(
      {
        get log() {
          return log();
        },
        cache: deps.cache,
        get client() {
          return fence.client;
        },
        recorder: deps.recorder,
        reconcileId: this.reconcileId,
        triggers: this.triggers,
        references: deps.references,
        get signal() {
          return fence.signal;
        },
        clock: deps.clock,
        writeObserver: deps.writeObserver,
      },
      this.writes,
    );
    // With tracing on, the reconcile's span is active in its async flow: its API calls are children.
    const span = this.span;
    const work = Promise.resolve().then(() => (span ? deps.tracer!.withSpan(span, () => deps.reconciler(this.req, ctx)) : deps.reconciler(this.req, ctx)));
    const finished = work.then(
      (result): AttemptOutcome => {
        fence.dispose();
        return { kind: 'returned', result };
      },
      (error: unknown): AttemptOutcome => {
        fence.dispose();
        return { kind: 'threw', error };
      },
    );
    if (!this.timeoutMs) return finished;
    return new Promise<AttemptOutcome>((resolve) => {
      const timer = deps.clock.setTimer(this.timeoutMs, () => {
        this.timedOut = true;
        // Only a reconcile past its timeout needs watching until it returns (see the class comment).
        this.settled = finished.then(() => undefined);
        fence.abort(new ReconcileTimeoutError(this.timeoutMs));
        resolve({ kind: 'timedOut', timeoutMs: this.timeoutMs });
      });
      void finished.then((outcome) => {
        timer.cancel();
        resolve(outcome);
      });
    });
  }
}
