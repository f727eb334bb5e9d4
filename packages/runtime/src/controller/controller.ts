import type { Logger } from 'pino';
import { randomUUID } from 'node:crypto';
import type { Cache, InformerOptions } from '../cache/cache.js';
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
import { reconcileContext, statusUpdate, type ReconcileContext, type RecordedWrite } from './reconcile-context.js';
import { CacheHolds } from './cache-holds.js';
import { ReferenceReader } from './reference-reader.js';
import type { Span, Tracer } from '../tracing/tracer.js';
import { requestKey, TerminalError, type Request, type Result } from './result.js';
import { Provenance, triggerLabel, type Trigger } from './provenance.js';

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
  /** Spans per reconcile when tracing is on (the manager's). */
  tracer?: Tracer;
  cache: Cache;
  client: Client;
  log: Logger;
  metrics: RuntimeMetrics;
  recorder: EventRecorder;
  clock?: Clock;
}

/** The reconcile ran past its timeout. */
export class ReconcileTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`reconcile timed out after ${timeoutMs / 1000}s`);
    this.name = 'ReconcileTimeoutError';
  }
}

/** One trigger in a log line: `Pod ns/web-1 update`, `requeue after 30000ms`, `retry 3`. */
const describeTrigger = (t: Trigger): string =>
  t.source === 'watch' ? `${t.kind} ${t.namespace ? `${t.namespace}/` : ''}${t.name} ${t.event}` : t.source === 'requeue' ? `requeue${t.after ? ` after ${t.after}ms` : ''}` : t.source === 'retry' ? `retry ${t.attempt}` : 'enqueue';

/** A failed reconcile is reported on the object from this many failures in a row (one blip is not news). */
const REPORT_AFTER_FAILURES = 2;

/** What one leadership term of a controller owns; a new term starts from nothing. */
interface Term {
  queue: WorkQueue;
  abort: AbortController;
  workers: Promise<void>[];
  unsubscribe: (() => void)[];
  /** Keys held until the cache shows their last reconcile's writes. */
  holds: CacheHolds;
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

  /** Why each key is queued, and why each key's last reconcile ran (/debug/queue). */
  readonly provenance = new Provenance();
  private references?: ReferenceReader;

  /**
   * The controller's queue as /debug/queue shows it: keys waiting (and why), keys waiting out a
   * delay or a backoff, keys in flight, and the last reconciles. `key` narrows it to one object.
   */
  inspect(key?: string, recent = 20) {
    const q = this.term?.queue.inspect();
    const now = Date.now();
    const mine = (k: string) => key === undefined || k === key;
    const withWhy = (k: string) => ({ key: k, retries: this.term?.queue.retries(k) || undefined, triggers: this.provenance.waiting(k) });
    return {
      controller: this.name,
      running: !!this.term,
      queued: (q?.queued ?? []).filter(mine).map(withWhy),
      waiting: (q?.delayed ?? []).filter(([k]) => mine(k)).map(([k, at]) => ({ ...withWhy(k), inMs: Math.max(0, at - now) })),
      heldForCache: (q?.held ?? []).filter(mine),
      inFlight: (q?.processing ?? []).filter(([k]) => mine(k)).map(([k, since]) => ({ key: k, forMs: Math.round(performance.now() - since) })),
      last: key === undefined ? this.provenance.recent(recent) : [this.provenance.last(key)].filter(Boolean),
    };
  }

  /** Queues a reconcile of `req` from code; its trigger says so. */
  enqueue(req: Request, trigger: Trigger = { source: 'enqueue', at: Date.now() }): void {
    if (!this.term) return;
    const key = requestKey(req);
    this.provenance.add(key, trigger);
    this.term.queue.add(key);
  }

  /**
   * Maps an event to requests and queues each once. An update maps both states (an owner reference
   * or a mapped field may have moved between them) and queues their union: queueing a request
   * twice could hand it to a worker between the two adds and run it twice for one event.
   */
  private async mapAndEnqueue<T extends KubeObject>(w: WatchSpec<T>, objs: T[], event: 'add' | 'update' | 'delete') {
    const obj = objs[objs.length - 1]!;
    try {
      const mapped = await Promise.all(objs.map((o) => w.map(o as Cached<T>, { cache: this.deps.cache })));
      const requests = new Map(mapped.flat().map((r) => [requestKey(r), r] as const));
      if (!requests.size) return;
      const trigger: Trigger = { source: 'watch', kind: w.kind.kind, namespace: obj.metadata.namespace || undefined, name: obj.metadata.name!, event, at: Date.now() };
      for (const r of requests.values()) this.enqueue(r, trigger);
    } catch (err) {
      this.log.error({ err, kind: w.kind.kind, object: obj.metadata.name }, 'mapping an event to requests failed');
    }
  }

  /** Begins a term: a fresh queue, subscriptions (every cached object replays as an add), workers. */
  start(): void {
    if (this.term) return;
    const queue = new WorkQueue(this.name, { rateLimiter: this.rateLimiter, metrics: this.queueMetrics });
    const unsubscribe: (() => void)[] = [];
    const term: Term = { queue, abort: new AbortController(), workers: [], unsubscribe, holds: new CacheHolds(queue, this.deps.cache, this.log, (u) => unsubscribe.push(u)) };
    this.term = term;
    this.provenance.clearPending();
    for (const w of this.watches as WatchSpec<KubeObject>[]) {
      const informer = this.deps.cache.informer(w.kind, w.informer);
      term.unsubscribe.push(
        informer.addHandler({
          onAdd: (obj) => w.predicates.every((p) => evaluatePredicate(p, 'create', [obj])) && void this.mapAndEnqueue(w, [obj], 'add'),
          onUpdate: (old, obj) => w.predicates.every((p) => evaluatePredicate(p, 'update', [old, obj])) && void this.mapAndEnqueue(w, [old, obj], 'update'),
          onDelete: (obj) => w.predicates.every((p) => evaluatePredicate(p, 'delete', [obj])) && void this.mapAndEnqueue(w, [obj], 'delete'),
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
  private async invoke(term: Term, req: Request, log: () => Logger, reconcileId: string, writes: RecordedWrite[], triggers: readonly Trigger[], span?: Span): Promise<Result> {
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
        triggers,
        references: (this.references ??= new ReferenceReader(this.deps.cache)),
        get signal() {
          return fence.signal;
        },
        clock: this.deps.clock ?? systemClock,
      }, writes);
      // With tracing on, the reconcile's span is active in its async flow: its API calls are children.
      const run = Promise.resolve().then(() => (span ? this.deps.tracer!.withSpan(span, () => this.reconciler(req, ctx)) : this.reconciler(req, ctx)));
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

  private async reconcileOne(term: Term, key: string): Promise<void> {
    const req: Request = parseKey(key);
    const reconcileId = randomUUID();
    const { triggers, dropped } = this.provenance.take(key);
    const startedAt = Date.now();
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
    for (const t of triggers) metrics.reconcileTriggers.inc({ ...labels, trigger: triggerLabel(t) });
    const span = this.deps.tracer?.enabled
      ? this.deps.tracer.startSpan(`reconcile ${this.name}`, {
          attributes: {
            'opkit.controller': this.name,
            'k8s.namespace.name': req.namespace ?? '',
            'opkit.object.name': req.name,
            'opkit.reconcile.id': reconcileId,
            'opkit.reconcile.triggers': triggers.map(describeTrigger),
          },
        })
      : undefined;
    let failure: string | undefined;
    try {
      const res = await this.invoke(term, req, log, reconcileId, writes, triggers, span);
      if (res && res.requeueAfter && res.requeueAfter > 0) {
        term.queue.forget(key);
        this.provenance.add(key, { source: 'requeue', after: res.requeueAfter, at: Date.now() });
        term.queue.addAfter(key, res.requeueAfter);
        result = 'requeue_after';
      } else if (res && res.requeue) {
        this.provenance.add(key, { source: 'requeue', at: Date.now() });
        term.queue.addRateLimited(key);
        result = 'requeue';
      } else {
        term.queue.forget(key);
      }
    } catch (err) {
      result = 'error';
      failure = (err as Error).message;
      metrics.reconcileErrors.inc(labels);
      if (term.abort.signal.aborted) {
        // The term ended under it (lease lost, shutdown): not the object's fault, nothing to report.
        log().info({ err: (err as Error).message }, 'reconcile interrupted: the controller is stopping');
      } else if (err instanceof TerminalError) {
        metrics.terminalErrors.inc(labels);
        term.queue.forget(key);
        log().error({ err, triggers: triggers.map(describeTrigger) }, 'reconcile failed with a terminal error; not retrying until the object changes');
        this.report(term, req, err);
      } else {
        term.queue.addRateLimited(key);
        const retries = term.queue.retries(key);
        this.provenance.add(key, { source: 'retry', attempt: retries, error: failure, at: Date.now() });
        // Conflicts are routine under optimistic concurrency: the retry reads fresh state.
        if (isConflict(err)) log().info({ retries, err: (err as ApiError).serverMessage }, 'conflict writing an object; retrying');
        else {
          if (err instanceof ReconcileTimeoutError) log().error({ retries, timeoutMs: err.timeoutMs }, 'reconcile timed out: its key is released and retried with backoff');
          else log().error({ err, retries, triggers: triggers.map(describeTrigger) }, 'reconcile failed; retrying with backoff');
          if (retries >= REPORT_AFTER_FAILURES) this.report(term, req, err as Error);
        }
      }
    } finally {
      // Whatever the outcome, what was written must be read back before the key runs again.
      if (!term.abort.signal.aborted) term.holds.hold(key, writes);
      // One line per reconcile at debug level (--log-level=debug): what ran, how it ended, what it wrote.
      const durationMs = Math.round(performance.now() - started);
      if (this.log.isLevelEnabled('debug')) log().debug({ result, writes: writes.length, durationMs, triggers: triggers.map(describeTrigger), droppedTriggers: dropped || undefined }, 'reconciled');
      this.provenance.record({ key, reconcileId, startedAt, durationMs, result, error: failure, triggers: [...triggers], dropped });
      if (span) {
        span.setAttribute('opkit.reconcile.result', result);
        span.setAttribute('opkit.reconcile.writes', writes.length);
        if (failure) span.fail(new Error(failure));
        span.end();
      }
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
    term.holds.end();
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
