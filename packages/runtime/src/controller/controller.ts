import type { Logger } from 'pino';
import { randomUUID } from 'node:crypto';
import type { Cache, InformerOptions, KindInformer } from '../cache/cache.js';
import { caughtUp } from '../cache/expectations.js';
import { systemClock, type Clock } from '../clock/clock.js';
import type { Client } from '../client/client.js';
import { ApiError, isConflict } from '../client/errors.js';
import { setCondition, type Condition } from '../helpers/conditions.js';
import { deepEqual } from '../helpers/equality.js';
import type { Kind } from '../client/kind.js';
import { parseKey, type Cached, type KubeObject } from '../client/types.js';
import type { EventRecorder } from '../events/recorder.js';
import type { RuntimeMetrics } from '../metrics/metrics.js';
import { defaultControllerRateLimiter, type RateLimiter } from '../queue/rate-limiters.js';
import { WorkQueue } from '../queue/work-queue.js';
import type { MapFunc } from './handlers.js';
import { ReconcileFence } from './fence.js';
import { evaluatePredicate, type Predicate } from './predicates.js';
import { informersSeeing, reconcileContext, statusUpdate, writeKey, type ReconcileContext, type RecordedWrite } from './reconcile-context.js';
import { requestKey, TerminalError, type Request, type Result } from './result.js';

export type Reconciler = (req: Request, ctx: ReconcileContext) => Promise<Result> | Result;

/** Default bound on one reconcile; see ControllerOptions.reconcileTimeoutMs. */
export const DEFAULT_RECONCILE_TIMEOUT_MS = 120_000;

export interface ControllerOptions {
  /** Workers; one key is still never reconciled twice at once. Default 1, as controller-runtime. */
  maxConcurrentReconciles?: number;
  rateLimiter?: RateLimiter;
  /**
   * How long one reconcile may run. Past it the reconcile's signal aborts, its key is released
   * (another event can reconcile it), the attempt counts as an error and is retried with backoff.
   * Default 2 min: a reconcile waits on API requests (bounded to 30 s each) and should requeue
   * rather than wait on anything slower. 0 turns it off.
   */
  reconcileTimeoutMs?: number;
  /**
   * A condition type of the primary object (e.g. `Ready`) that a persistent reconcile error is
   * written to, status False with the API's reason (`Forbidden`) and message, so `kubectl get`
   * shows the failure instead of a stale healthy status. The reconciler's next success replaces it.
   */
  errorCondition?: string;
}

/** One event source of a controller: a kind, how its objects map to requests, and filters. */
export interface WatchSpec<T extends KubeObject = KubeObject> {
  kind: Kind<T>;
  map: MapFunc<T>;
  predicates: Predicate<T>[];
  informer?: InformerOptions;
}

export interface ControllerDeps {
  cache: Cache;
  client: Client;
  log: Logger;
  metrics: RuntimeMetrics;
  recorder: EventRecorder;
  clock?: Clock;
}

/**
 * How long a key is held for the cache to show its last reconcile's writes. Past it the key runs
 * anyway (a watch that lags this much is reported by /readyz, and the reconcile is level-based).
 */
const HOLD_LIMIT_MS = 10_000;

/** A key held until the cache shows what its last reconcile wrote. */
interface Hold {
  pending: { write: RecordedWrite; informer: KindInformer<KubeObject> }[];
  timer: NodeJS.Timeout;
}

/** The reconcile ran past its timeout. */
export class ReconcileTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`reconcile timed out after ${timeoutMs / 1000}s`);
    this.name = 'ReconcileTimeoutError';
  }
}

/** A failed reconcile is reported on the object from this many failures in a row (one blip is not news). */
const REPORT_AFTER_FAILURES = 2;

/** What one leadership term of a controller owns; a new term starts from nothing. */
interface Term {
  queue: WorkQueue;
  abort: AbortController;
  workers: Promise<void>[];
  unsubscribe: (() => void)[];
  holds: Map<string, Hold>;
  /** Informers this term listens to for held keys (subscribed on first need, without replay). */
  listening: Set<KindInformer<KubeObject>>;
}

/**
 * Events from watches → predicates → requests → work queue → N workers → the reconciler, with the
 * Result contract applied and every outcome counted. A reconciler that throws is contained: logged
 * with its stack, counted, retried with backoff, and (persistently) reported on the object; the
 * process and the watches carry on.
 *
 * A controller runs in terms: start() begins one (a fresh queue; the informers replay every object),
 * halt() ends it at once when leadership is lost (no drain: another replica may already lead), and
 * stop() ends it gracefully on shutdown.
 */
export class Controller {
  private readonly log: Logger;
  private term?: Term;
  private readonly max: number;
  private readonly timeoutMs: number;
  private readonly rateLimiter: RateLimiter;
  private readonly queueMetrics;

  constructor(
    readonly name: string,
    private readonly watches: WatchSpec[],
    private readonly reconciler: Reconciler,
    private readonly deps: ControllerDeps,
    private readonly options: ControllerOptions = {},
  ) {
    this.max = Math.max(1, options.maxConcurrentReconciles ?? 1);
    this.timeoutMs = options.reconcileTimeoutMs ?? DEFAULT_RECONCILE_TIMEOUT_MS;
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter();
    this.log = deps.log.child({ controller: name });
    this.queueMetrics = deps.metrics.forQueue(name, () => this.term?.queue.processingSince() ?? []);
    deps.metrics.maxConcurrent.set({ controller: name }, this.max);
    deps.metrics.activeWorkers.set({ controller: name }, 0);
    for (const result of ['success', 'error', 'requeue', 'requeue_after']) deps.metrics.reconcileTotal.inc({ controller: name, result }, 0);
    deps.metrics.reconcileErrors.inc({ controller: name }, 0);
  }

  /** The informers this controller reads; the manager starts and syncs them before the workers. */
  informers() {
    return this.watches.map((w) => this.deps.cache.informer(w.kind, w.informer));
  }

  enqueue(req: Request): void {
    this.term?.queue.add(requestKey(req));
  }

  private async mapAndEnqueue<T extends KubeObject>(w: WatchSpec<T>, obj: T) {
    try {
      for (const r of await w.map(obj as Cached<T>, { cache: this.deps.cache })) this.enqueue(r);
    } catch (err) {
      this.log.error({ err, kind: w.kind.kind, object: obj.metadata.name }, 'mapping an event to requests failed');
    }
  }

  /** Begins a term: a fresh queue, subscriptions (every cached object replays as an add), workers. */
  start(): void {
    if (this.term) return;
    const term: Term = {
      queue: new WorkQueue(this.name, { rateLimiter: this.rateLimiter, metrics: this.queueMetrics }),
      abort: new AbortController(),
      workers: [],
      unsubscribe: [],
      holds: new Map(),
      listening: new Set(),
    };
    this.term = term;
    for (const w of this.watches as WatchSpec<KubeObject>[]) {
      const informer = this.deps.cache.informer(w.kind, w.informer);
      term.unsubscribe.push(
        informer.addHandler({
          onAdd: (obj) => w.predicates.every((p) => evaluatePredicate(p, 'create', [obj])) && void this.mapAndEnqueue(w, obj),
          onUpdate: (old, obj) => {
            if (!w.predicates.every((p) => evaluatePredicate(p, 'update', [old, obj]))) return;
            // Both states: an owner reference or a mapped field may have moved between them.
            void this.mapAndEnqueue(w, old);
            void this.mapAndEnqueue(w, obj);
          },
          onDelete: (obj) => w.predicates.every((p) => evaluatePredicate(p, 'delete', [obj])) && void this.mapAndEnqueue(w, obj),
        }),
      );
    }
    for (let i = 0; i < this.max; i++) term.workers.push(this.work(term));
    this.log.info({ workers: this.max }, 'controller started');
  }

  private async work(term: Term): Promise<void> {
    for (;;) {
      const key = await term.queue.get();
      if (key === undefined) return;
      try {
        await this.reconcileOne(term, key);
      } finally {
        term.queue.done(key);
      }
    }
  }

  /** Runs the reconciler under the term's signal and the timeout; resolves with its result or throws. */
  private async invoke(term: Term, req: Request, log: () => Logger, reconcileId: string, writes: RecordedWrite[]): Promise<Result> {
    const fence = new ReconcileFence(term.abort.signal, this.deps.client);
    let timer: NodeJS.Timeout | undefined;
    try {
      const ctx = reconcileContext({
        get log() {
          return log();
        },
        cache: this.deps.cache,
        get client() {
          return fence.client;
        },
        recorder: this.deps.recorder,
        reconcileId,
        get signal() {
          return fence.signal;
        },
        clock: this.deps.clock ?? systemClock,
      }, writes);
      const run = Promise.resolve().then(() => this.reconciler(req, ctx));
      if (!this.timeoutMs) return await run;
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          const err = new ReconcileTimeoutError(this.timeoutMs);
          fence.abort(err);
          reject(err);
        }, this.timeoutMs);
      });
      // A reconcile deaf to its signal keeps running detached; its fenced client can no longer write.
      run.catch(() => undefined);
      return await Promise.race([run, timedOut]);
    } finally {
      clearTimeout(timer);
      fence.dispose();
    }
  }

  /**
   * Holds the key while a cache this controller reads has not shown what its reconcile wrote: the
   * watch event of the write itself re-adds the key, and running it before the cache caught up
   * would read stale state and repeat the write. No worker waits: the key is parked in the queue
   * and released by the informer event that catches the cache up (or after HOLD_LIMIT_MS).
   */
  private holdForCache(term: Term, key: string, writes: RecordedWrite[]) {
    const pending: Hold['pending'] = [];
    for (const write of writes) {
      for (const informer of informersSeeing(this.deps.cache, write)) {
        if (!caughtUp(write.expectation, informer.get(write.key), informer.versionFor(write.key.namespace))) pending.push({ write, informer });
      }
    }
    if (!pending.length || term.abort.signal.aborted) return;
    for (const { informer } of pending) {
      if (term.listening.has(informer)) continue;
      term.listening.add(informer);
      const recheck = () => this.recheck(term, informer);
      term.unsubscribe.push(informer.addHandler({ onAdd: recheck, onUpdate: recheck, onDelete: recheck }, { replay: false }));
    }
    const previous = term.holds.get(key);
    if (previous) clearTimeout(previous.timer);
    const timer = setTimeout(() => {
      term.holds.delete(key);
      this.log.debug({ key, waitingFor: pending.map((p) => writeKey(p.write)) }, 'the cache did not show this reconcile\'s writes in time; running the key anyway');
      term.queue.release(key);
    }, HOLD_LIMIT_MS);
    timer.unref?.();
    term.holds.set(key, { pending, timer });
    term.queue.hold(key);
  }

  private recheck(term: Term, informer: KindInformer<KubeObject>) {
    for (const [key, hold] of term.holds) {
      if (!hold.pending.some((p) => p.informer === informer)) continue;
      hold.pending = hold.pending.filter((p) => !caughtUp(p.write.expectation, p.informer.get(p.write.key), p.informer.versionFor(p.write.key.namespace)));
      if (hold.pending.length) continue;
      clearTimeout(hold.timer);
      term.holds.delete(key);
      term.queue.release(key);
    }
  }

  private endHolds(term: Term) {
    for (const hold of term.holds.values()) clearTimeout(hold.timer);
    term.holds.clear();
  }

  private async reconcileOne(term: Term, key: string): Promise<void> {
    const req: Request = parseKey(key);
    const reconcileId = randomUUID();
    // The reconcile's logger, made when first used: most reconciles log nothing at the default level,
    // and a pino child costs them more than their own work (bench/runtime/reconcile-throughput).
    let child: Logger | undefined;
    const log = () => (child ??= this.log.child({ namespace: req.namespace, name: req.name, reconcileID: reconcileId }));
    const { metrics } = this.deps;
    const labels = { controller: this.name };
    metrics.activeWorkers.inc(labels);
    const end = metrics.reconcileTime.startTimer(labels);
    let result: 'success' | 'error' | 'requeue' | 'requeue_after' = 'success';
    const writes: RecordedWrite[] = [];
    const started = performance.now();
    try {
      const res = await this.invoke(term, req, log, reconcileId, writes);
      if (res && res.requeueAfter && res.requeueAfter > 0) {
        term.queue.forget(key);
        term.queue.addAfter(key, res.requeueAfter);
        result = 'requeue_after';
      } else if (res && res.requeue) {
        term.queue.addRateLimited(key);
        result = 'requeue';
      } else {
        term.queue.forget(key);
      }
    } catch (err) {
      result = 'error';
      metrics.reconcileErrors.inc(labels);
      if (term.abort.signal.aborted) {
        // The term ended under it (lease lost, shutdown): not the object's fault, nothing to report.
        log().info({ err: (err as Error).message }, 'reconcile interrupted: the controller is stopping');
      } else if (err instanceof TerminalError) {
        metrics.terminalErrors.inc(labels);
        term.queue.forget(key);
        log().error({ err }, 'reconcile failed with a terminal error; not retrying until the object changes');
        this.report(term, req, err);
      } else {
        term.queue.addRateLimited(key);
        const retries = term.queue.retries(key);
        // Conflicts are routine under optimistic concurrency: the retry reads fresh state.
        if (isConflict(err)) log().info({ retries, err: (err as ApiError).serverMessage }, 'conflict writing an object; retrying');
        else {
          if (err instanceof ReconcileTimeoutError) log().error({ retries, timeoutMs: err.timeoutMs }, 'reconcile timed out: its key is released and retried with backoff');
          else log().error({ err, retries }, 'reconcile failed; retrying with backoff');
          if (retries >= REPORT_AFTER_FAILURES) this.report(term, req, err as Error);
        }
      }
    } finally {
      // Whatever the outcome, what was written must be read back before the key runs again.
      this.holdForCache(term, key, writes);
      // One line per reconcile at debug level (--log-level=debug): what ran, how it ended, what it wrote.
      if (this.log.isLevelEnabled('debug')) log().debug({ result, writes: writes.length, durationMs: Math.round(performance.now() - started) }, 'reconciled');
      end();
      metrics.activeWorkers.dec(labels);
      metrics.reconcileTotal.inc({ ...labels, result });
    }
  }

  /**
   * Puts a failure where the user looks: a Warning Event on the primary object (repeats aggregate
   * into one Event with a count) and, when the controller names one, its error condition.
   */
  private report(term: Term, req: Request, err: Error): void {
    const primary = this.watches[0];
    const obj = this.deps.cache.informer(primary.kind, primary.informer).get(req);
    if (!obj || obj.metadata.deletionTimestamp) return;
    const reason = err instanceof ApiError ? err.reason : err instanceof ReconcileTimeoutError ? 'Timeout' : 'ReconcileError';
    const message = err instanceof ApiError ? err.serverMessage : err.message;
    this.deps.recorder.warning(obj, 'ReconcileError', message);
    if (!this.options.errorCondition) return;
    const status = ((obj as { status?: { conditions?: Condition[] } }).status ?? {}) as { conditions?: Condition[] };
    const now = new Date((this.deps.clock ?? systemClock).now());
    const conditions = setCondition(status.conditions, { type: this.options.errorCondition, status: 'False', reason, message, observedGeneration: obj.metadata.generation }, now);
    if (deepEqual(conditions, status.conditions)) return;
    // Guarded by resourceVersion: a newer status (the reconciler's own) wins over this report.
    this.deps.client
      .withSignal(term.abort.signal)
      .updateStatus(primary.kind, statusUpdate(obj, { ...status, conditions }))
      .catch((e: Error) => this.log.warn({ err: e.message, name: req.name, namespace: req.namespace }, `could not write the error to the ${this.options.errorCondition} condition`));
  }

  /** Takes the current term out of service: no new events, no holds, no new work handed out. */
  private closeTerm(): Term | undefined {
    const term = this.term;
    if (!term) return undefined;
    this.term = undefined;
    for (const u of term.unsubscribe) u();
    this.endHolds(term);
    term.queue.shutDown();
    return term;
  }

  /**
   * Ends the term at once: no new work, in-flight reconciles see their signal abort and their
   * client refuse further requests. For a lost lease, where waiting would mean two leaders.
   */
  halt(): void {
    const term = this.closeTerm();
    if (!term) return;
    term.abort.abort(new Error('leadership lost'));
    this.log.info({ inFlight: term.queue.inFlight }, 'controller halted');
  }

  /** Stops taking work and waits (up to the deadline) for in-flight reconciles to finish. */
  async stop(deadlineMs = 30_000): Promise<void> {
    const term = this.closeTerm();
    if (!term) return;
    let timer: NodeJS.Timeout | undefined;
    const drained = await Promise.race([
      term.queue.drain().then(() => true),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(false), deadlineMs))),
    ]);
    clearTimeout(timer);
    term.abort.abort(new Error('controller stopping'));
    if (!drained) this.log.warn({ inFlight: term.queue.inFlight }, 'reconciles still running at the shutdown deadline');
    await Promise.race([Promise.all(term.workers), new Promise((r) => setTimeout(r, 1000))]);
    this.log.info('controller stopped');
  }
}
