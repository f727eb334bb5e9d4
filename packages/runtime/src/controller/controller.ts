import type { Kind } from '../client/kind.js';
import type { Logger } from 'pino';
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { Cache } from '../cache/cache.js';
import { systemClock, type Clock, type Timer } from '../clock/clock.js';
import type { Client } from '../client/client.js';
import { ApiError } from '../client/errors.js';
import { parseKey, type Cached, type KubeObject } from '../client/types.js';
import type { EventRecorder } from '../events/recorder.js';
import type { RuntimeMetrics } from '../metrics/metrics.js';
import { defaultControllerRateLimiter, type RateLimiter } from '../queue/rate-limiters.js';
import { Debouncer } from '../queue/debounce.js';
import { PerObjectLimit } from '../queue/per-object-limit.js';
import { Priority, WorkQueue } from '../queue/work-queue.js';
import type { Span, Tracer } from '../tracing/tracer.js';
import { ReconcileAttempt, ReconcileTimeoutError, type AttemptDeps, type Reconciler } from './attempt.js';
import { CacheHolds } from './read-your-writes.js';
import { OwnWrites } from './own-writes.js';
import { DeniedPermissions, deniedPermissionOf } from './denied-permissions.js';
import { FailureReports, type ErrorStatus } from './failure-report.js';
import { classify, type AttemptOutcome, type Decision } from './outcome.js';
import { evaluatePredicate } from './predicates.js';
import { priorityOf } from './event-priority.js';
import { Provenance, triggerLabel, type Trigger } from './provenance.js';
import { ReferenceReader } from './reference-reader.js';
import { requestKey, type Request } from './result.js';
import { requestForObject } from './handlers.js';
import type { WatchSpec } from './watch-spec.js';
import { ShardFilter } from '../sharding/shard-filter.js';
import { EMPTY, isEmpty, shardSelector, subtract, type RangeSet, type ShardField } from '../sharding/ranges.js';

export { ReconcileTimeoutError, type Reconciler } from './attempt.js';
export type { WatchSpec } from './watch-spec.js';

/** Default bound on one reconcile; see ControllerOptions.reconcileTimeoutMs. */
export const DEFAULT_RECONCILE_TIMEOUT_MS = 120_000;

/** Default period of the resync; see ControllerOptions.resyncPeriodMs. */
export const DEFAULT_RESYNC_PERIOD_MS = 10 * 3_600_000;

export interface ControllerOptions {
  /** Workers; one key is still never reconciled twice at once. Default 1, as controller-runtime. */
  maxConcurrentReconciles?: number;
  rateLimiter?: RateLimiter;
  /**
   * How long one reconcile may run. Past it the reconcile's signal aborts, its client refuses
   * further requests, its worker takes other keys, and the attempt counts as an error retried with
   * backoff. The key itself stays in flight until the reconciler returns: work deaf to its signal
   * is never joined by a second reconcile of the same object. Default 2 min: a reconcile waits on
   * API requests (bounded to 30 s each) and should requeue rather than wait on anything slower.
   * 0 turns it off.
   */
  reconcileTimeoutMs?: number;
  /**
   * A condition type of the primary object (e.g. `Ready`) that a persistent reconcile error is
   * written to, status False with the API's reason (`Forbidden`) and message, so `kubectl get`
   * shows the failure instead of a stale healthy status. The reconciler's next success replaces it.
   */
  errorCondition?: string;
  /**
   * The whole status to write while reconciles fail, when more than one field must agree (a phase
   * beside the conditions); takes the place of `errorCondition`.
   */
  errorStatus?: ErrorStatus;
  /**
   * Every object of the primary kind is reconciled again this often, at low priority and past the
   * predicates: drift nobody is told of (an external system, an event lost to a bug) is repaired
   * without each reconciler remembering to requeue. Default 10 h, as controller-runtime's SyncPeriod
   * and java-operator-sdk's maxReconciliationInterval; each term draws it up to 10% longer, so
   * replicas and controllers started together do not resync together. 0 turns it off.
   */
  resyncPeriodMs?: number;
  /**
   * Queue the initial list and resyncs at Priority.low, behind users' edits (default). `false`:
   * one FIFO for every event, as client-go's plain queue (kept to measure the difference, and for
   * reconcilers that rely on arrival order).
   */
  priorityQueue?: boolean;
  /**
   * Merge a burst of watch events for one object into one reconcile, run once the object has been
   * quiet this long, and at the latest ten times this long after the burst began (an object written
   * without pause is still reconciled). For objects another writer changes in bursts (a status
   * written every second by its own controller). Default 0: every event queues at once.
   */
  debounceMs?: number;
  /**
   * At most `reconciles` reconciles of one object per `perMs` (java-operator-sdk's per-resource
   * rate limiter): a reconcile due sooner waits in the queue, not in a worker. Bounds what one
   * object that requeues itself in a loop, or that changes without pause, can cost everyone else.
   * Default: none.
   */
  perObjectRateLimit?: { reconciles: number; perMs: number };
  /**
   * Drop the watch events this controller's own writes cause (java-operator-sdk's own-event
   * filtering): an event whose object is exactly the version a reconcile of ours wrote queues
   * nothing, so a write does not cost a second, no-op reconcile. Read-your-writes is unchanged (the
   * key is still held until the cache shows the write); any other version, someone else's write
   * or ours followed by theirs, passes. Off by default: a reconciler that creates a child and
   * counts on that child's creation event to reconcile again (to fill in status from it) waits for
   * the child's next change instead. Turn it on where each reconcile finishes its own work.
   */
  skipOwnWriteEvents?: boolean;
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

/** One trigger in a log line: `Pod ns/web-1 update`, `requeue after 30000ms`, `retry 3`. */
const describeTrigger = (t: Trigger): string =>
  t.source === 'watch'
    ? `${t.kind} ${t.namespace ? `${t.namespace}/` : ''}${t.name} ${t.event}`
    : t.source === 'requeue'
      ? `requeue${t.after ? ` after ${t.after}ms` : ''}`
      : t.source === 'retry'
        ? `retry ${t.attempt}`
        : t.source;

/** The engine's own faults: what a Go reconciler would have panicked on (a bug, not a refusal). */
const isProgrammingFault = (err: unknown): boolean =>
  err instanceof TypeError || err instanceof ReferenceError || err instanceof RangeError || err instanceof SyntaxError;

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
  /** Keys whose reconcile ran past its timeout and has not returned yet (in flight, without a worker). */
  overdue: Set<string>;
  denied: DeniedPermissions;
  resync?: Timer;
  /** Watch events waiting for their object to be quiet (debounceMs). */
  debouncer?: Debouncer;
}

/**
 * Events from watches → predicates → requests → work queue → N workers → one ReconcileAttempt per
 * key → `classify` (outcome.ts, a pure table) → the queue, the metrics, the log and the object. A
 * reconciler that throws is contained: logged with its stack, counted, retried with backoff, and
 * (persistently) reported on the object; the process and the watches carry on.
 *
 * A controller runs in terms: start() begins one (a fresh queue; the informers replay every object),
 * halt() ends it at once when leadership is lost (no drain: another replica may already lead; a
 * term being drained is aborted too), and stop() ends it gracefully on shutdown.
 */
export class Controller {
  private readonly log: Logger;
  private term?: Term;
  /** The term stop() is draining: halt() must still reach it. */
  private draining?: Term;
  private readonly max: number;
  private readonly timeoutMs: number;
  private readonly resyncPeriodMs: number;
  /** The priority of what nobody changed just now (initial list, resync). */
  private readonly background: number;
  private readonly debounceMs: number;
  private readonly perObject?: PerObjectLimit;
  private readonly ownWrites?: OwnWrites;
  private readonly rateLimiter: RateLimiter;
  private readonly queueMetrics;
  private readonly clock: Clock;
  private readonly reports: FailureReports;
  /** Why each key is queued, and why each key's last reconcile ran (/debug/queue). */
  readonly provenance = new Provenance();
  /** What every attempt of this controller shares (made once: a reconcile's own cost is the hot path). */
  private attemptDeps?: AttemptDeps;
  /** Sharded: which keys are this replica's (sharding/shard-filter.ts); none: every key is. */
  private shard?: ShardFilter;

  constructor(
    readonly name: string,
    private readonly watches: WatchSpec[],
    private readonly reconciler: Reconciler,
    private readonly deps: ControllerDeps,
    options: ControllerOptions = {},
  ) {
    this.max = Math.max(1, options.maxConcurrentReconciles ?? 1);
    this.timeoutMs = options.reconcileTimeoutMs ?? DEFAULT_RECONCILE_TIMEOUT_MS;
    this.resyncPeriodMs = options.resyncPeriodMs ?? DEFAULT_RESYNC_PERIOD_MS;
    this.background = options.priorityQueue === false ? Priority.normal : Priority.low;
    this.debounceMs = Math.max(0, options.debounceMs ?? 0);
    this.perObject = options.perObjectRateLimit && new PerObjectLimit(options.perObjectRateLimit.reconciles, options.perObjectRateLimit.perMs);
    if (options.skipOwnWriteEvents) this.ownWrites = new OwnWrites();
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter();
    this.clock = deps.clock ?? systemClock;
    this.log = deps.log.child({ controller: name });
    this.reports = new FailureReports({ ...deps, log: this.log, clock: this.clock }, watches[0]!, options);
    this.queueMetrics = deps.metrics.forQueue(name, () => this.term?.queue.processingAges() ?? []);
    deps.metrics.maxConcurrent.set({ controller: name }, this.max);
    deps.metrics.activeWorkers.set({ controller: name }, 0);
    for (const result of ['success', 'error', 'requeue', 'requeue_after']) deps.metrics.reconcileTotal.inc({ controller: name, result }, 0);
    deps.metrics.reconcileErrors.inc({ controller: name }, 0);
    deps.metrics.reconcilePanics.inc({ controller: name }, 0);
    deps.metrics.reconcileTimeouts.inc({ controller: name }, 0);
  }

  /** The informers this controller reads; the manager starts and syncs them before the workers. */
  informers() {
    return this.watches.map((w) => this.deps.cache.informer(w.kind, w.informer));
  }

  /**
   * The controller's queue as /debug/queue shows it: keys waiting (and why), keys waiting out a
   * delay or a backoff, keys in flight (and whether past their timeout), permissions waited for,
   * and the last reconciles. `key` narrows it to one object.
   */
  inspect(key?: string, recent = 20) {
    const term = this.term;
    const q = term?.queue.inspect();
    const now = term?.queue.now() ?? 0;
    const mine = (k: string) => key === undefined || k === key;
    const withWhy = (k: string) => ({ key: k, retries: term?.queue.retries(k) || undefined, triggers: this.provenance.waiting(k) });
    return {
      controller: this.name,
      running: !!term,
      // In the order workers will take them; `priority` shown where it is not normal.
      queued: (q?.queued ?? []).filter(mine).map((k) => ({ ...withWhy(k), priority: q?.priorities[k] })),
      waiting: (q?.delayed ?? []).filter(([k]) => mine(k)).map(([k, at]) => ({ ...withWhy(k), inMs: Math.max(0, Math.round(at - now)) })),
      heldForCache: (q?.held ?? []).filter(mine),
      inFlight: (q?.processing ?? [])
        .filter(([k]) => mine(k))
        .map(([k, since]) => ({ key: k, forMs: Math.round(now - since), timedOut: term?.overdue.has(k) || undefined })),
      waitingForPermissions: term?.denied.inspect() ?? [],
      last: key === undefined ? this.provenance.recent(recent) : [this.provenance.last(key)].filter(Boolean),
    };
  }

  /** Queues a reconcile of `req` from code; its trigger says so. `uid`: the primary object's, when the event knows it. */
  enqueue(req: Request, trigger: Trigger = { source: 'enqueue', at: this.clock.now() }, priority: number = Priority.normal, uid?: string): void {
    if (!this.term) return;
    const key = requestKey(req);
    if (this.shard) {
      // Another replica's key: not even queued.
      if (!this.shard.owns(key, uid)) return;
      this.shard.note(key, uid);
    }
    this.provenance.add(key, trigger);
    this.term.queue.add(key, priority);
  }

  /**
   * Maps an event to requests and queues each once. An update maps both states (an owner reference
   * or a mapped field may have moved between them) and queues their union: queueing a request
   * twice could hand it to a worker between the two adds and run it twice for one event.
   */
  private async mapAndEnqueue<T extends KubeObject>(w: WatchSpec<T>, objs: T[], event: 'add' | 'update' | 'delete' | 'list') {
    const obj = objs[objs.length - 1]!;
    try {
      const mapped = await Promise.all(objs.map(async (o) => w.map(o as Cached<T>, { cache: this.deps.cache })));
      const requests = new Map(mapped.flat().map((r) => [requestKey(r), r] as const));
      if (!requests.size) return;
      const trigger: Trigger = {
        source: 'watch',
        kind: w.kind.kind,
        namespace: obj.metadata.namespace || undefined,
        name: obj.metadata.name!,
        event,
        at: this.clock.now(),
      };
      // What was there before the term began waits behind what users change now; a watch may say
      // its events finish work in flight (Priority.high).
      // objs is [before, now] for an update, [the object] for a create or delete.
      const priority = event === 'list' ? this.background : priorityOf(w.priority, obj, event === 'add' ? undefined : objs[0]);
      const debouncer = this.term?.debouncer;
      // A primary object's event is for that object itself (requestForObject), and tells its uid:
      // sharding places keys by it, and a deleted object is gone from the cache.
      const uid = this.shard && (w as unknown) === this.watches[0] ? obj.metadata.uid : undefined;
      for (const r of requests.values()) {
        if (!debouncer || event === 'list') {
          this.enqueue(r, trigger, priority, uid);
          continue;
        }
        const key = requestKey(r);
        this.provenance.add(key, trigger);
        debouncer.push(key, priority);
      }
    } catch (err) {
      this.log.error({ err, kind: w.kind.kind, object: obj.metadata.name }, 'mapping an event to requests failed');
    }
  }

  /** Keys queued ready or reconciling now (not those waiting out a delay): 0 when the controller is idle. */
  get pending(): number {
    const q = this.term?.queue;
    return q ? q.length + q.inFlight : 0;
  }

  /** The kind this controller reconciles (its first watch). */
  get primaryKind(): Kind {
    return this.watches[0]!.kind;
  }

  /**
   * Runs only the keys whose primary object hashes (by `field`, as the API server's shard selector
   * would) into this replica's part of the hash space: none until setShardRanges gives it some.
   * `onServer`: the primary kind's informer also lists and watches only those objects (a shard
   * selector), so the cache holds this replica's share of them; every reader of that informer
   * sees only the share.
   */
  shardBy(field: ShardField, options: { onServer?: boolean } = {}): void {
    const primary = this.watches[0]!;
    const informer = () => this.deps.cache.informer(primary.kind, primary.informer);
    this.shard = new ShardFilter(field, (key) => informer().get(parseKey(key))?.metadata.uid);
    if (!options.onServer) return;
    this.selectOnServer = (ranges) => informer().reselect(shardSelector(field, ranges));
    this.selectOnServer(EMPTY);
  }
  /** Sharded with server-side selection: narrows the primary informer to these ranges. */
  private selectOnServer?: (ranges: RangeSet) => void;

  /**
   * This replica's part of the hash space changed (ShardMember). Keys it lost are dropped when they
   * come up (drainShard waits for those in flight); keys it gained are reconciled once each, at low
   * priority. `fenced`: its Lease could not be renewed in time: in-flight reconciles are aborted at
   * once, as on a lost leader lease.
   */
  setShardRanges(ranges: RangeSet, fenced: boolean): void {
    if (!this.shard) return;
    const before = this.shard.ranges;
    // The filter first: what the informer's relist drops must already be no key of this replica's.
    this.shard.set(ranges);
    this.selectOnServer?.(ranges);
    if (fenced && this.term) {
      this.halt();
      this.start();
      return;
    }
    const gained = subtract(ranges, before);
    if (isEmpty(gained) || !this.term) return;
    const at = this.clock.now();
    const primary = this.watches[0]!;
    for (const obj of this.deps.cache.informer(primary.kind, primary.informer).list())
      for (const r of requestForObject(obj))
        if (this.shard.within(requestKey(r), gained)) this.enqueue(r, { source: 'shard', at }, this.background, obj.metadata.uid);
  }

  /** Resolves once no reconcile of a key in `ranges` is in flight (setShardRanges already keeps new ones from starting). */
  async drainShard(ranges: RangeSet, signal: AbortSignal): Promise<void> {
    const busy = () => {
      const term = this.term ?? this.draining;
      return !!term && term.queue.inspect().processing.some(([k]) => this.shard?.within(k, ranges));
    };
    while (busy() && !signal.aborted) await this.clock.sleep(50, signal);
  }

  /** Begins a term: a fresh queue, subscriptions (every cached object replays as an add), workers. */
  start(): void {
    if (this.term) return;
    const queue = new WorkQueue(this.name, { rateLimiter: this.rateLimiter, metrics: this.queueMetrics, clock: this.clock });
    const unsubscribe: (() => void)[] = [];
    const abort = new AbortController();
    // Each reconcile in flight listens on the term's signal (its fence), and removes its listener when
    // it returns: as many as workers, plus those past their timeout. Not a leak, whatever their number.
    setMaxListeners(0, abort.signal);
    const term: Term = {
      queue,
      abort,
      workers: [],
      unsubscribe,
      holds: new CacheHolds(queue, this.deps.cache, this.log, (u) => unsubscribe.push(u), this.clock),
      overdue: new Set(),
      denied: new DeniedPermissions(this.deps.client, this.clock, this.log, (keys) => {
        for (const key of keys) {
          queue.forget(key);
          this.provenance.add(key, { source: 'enqueue', at: this.clock.now() });
          queue.add(key);
        }
      }),
    };
    if (this.debounceMs > 0) term.debouncer = new Debouncer(this.clock, this.debounceMs, this.debounceMs * 10, (key, p) => queue.add(key, p));
    this.term = term;
    this.provenance.clearPending();
    const primary = this.watches[0];
    for (const w of this.watches as WatchSpec<KubeObject>[]) {
      const informer = this.deps.cache.informer(w.kind, w.informer);
      const passes = (event: 'create' | 'update' | 'delete', objs: [KubeObject] | [KubeObject, KubeObject]) =>
        w.predicates.every((p) => evaluatePredicate(p, event, objs));
      term.unsubscribe.push(
        informer.addHandler({
          onAdd: (obj, meta) => {
            const handle = () => {
              if (!meta?.initialList && this.ownWrites?.isOwn(w.kind, obj)) return;
              if (passes('create', [obj])) void this.mapAndEnqueue(w, [obj], meta?.initialList ? 'list' : 'add');
            };
            if (!this.ownWrites?.deferred(w.kind, obj, handle)) handle();
          },
          onUpdate: (old, obj) => {
            const handle = () => {
              // A failure report's own status write: the key is backing off, and stays so.
              if (w === primary && this.reports.isOwnWrite(old, obj)) return;
              if (this.ownWrites?.isOwn(w.kind, obj)) return;
              if (passes('update', [old, obj])) void this.mapAndEnqueue(w, [old, obj], 'update');
            };
            if (!this.ownWrites?.deferred(w.kind, obj, handle)) handle();
          },
          onDelete: (obj) => passes('delete', [obj]) && void this.mapAndEnqueue(w, [obj], 'delete'),
        }),
      );
    }
    this.scheduleResync(term);
    for (let i = 0; i < this.max; i++) term.workers.push(this.work(term));
    this.log.info({ workers: this.max }, 'controller started');
  }

  /** The periodic resync of this term: every primary object, at low priority, past the predicates. */
  private scheduleResync(term: Term) {
    if (this.resyncPeriodMs <= 0) return;
    const primary = this.watches[0]!;
    term.resync = this.clock.setTimer(this.resyncPeriodMs * (1 + Math.random() * 0.1), () => {
      if (this.term !== term) return;
      const at = this.clock.now();
      for (const obj of this.deps.cache.informer(primary.kind, primary.informer).list())
        for (const r of requestForObject(obj)) this.enqueue(r, { source: 'resync', at }, this.background);
      this.scheduleResync(term);
    });
  }

  private async work(term: Term): Promise<void> {
    for (;;) {
      const key = await term.queue.get();
      if (key === undefined) return;
      if (this.shard && !this.shard.owns(key)) {
        // Queued before its part of the hash space was handed over: another replica's now.
        this.shard.forget(key);
        this.provenance.take(key);
        term.queue.forget(key);
        term.queue.done(key);
        continue;
      }
      if (this.perObject) {
        const now = this.clock.monotonic();
        const wait = this.perObject.delay(key, now);
        if (wait > 0) {
          // Back to the queue until the window allows it; its triggers stay pending.
          const priority = term.queue.priorityOf(key) ?? Priority.normal;
          term.queue.done(key);
          term.queue.addAfter(key, wait, priority);
          continue;
        }
        this.perObject.started(key, now);
      }
      await this.reconcileOne(term, key);
    }
  }

  /** One attempt: run it, decide what its outcome means, and apply the decision. Resolves when the worker is free again. */
  private async reconcileOne(term: Term, key: string): Promise<void> {
    const req: Request = parseKey(key);
    const reconcileId = randomUUID();
    const { triggers, dropped } = this.provenance.take(key);
    const startedAt = this.clock.now();
    const started = this.clock.monotonic();
    const { metrics } = this.deps;
    const labels = { controller: this.name };
    metrics.activeWorkers.inc(labels);
    const end = metrics.reconcileTime.startTimer(labels);
    for (const t of triggers) metrics.reconcileTriggers.inc({ ...labels, trigger: triggerLabel(t) });
    const span = this.startSpan(req, reconcileId, triggers);
    this.attemptDeps ??= {
      reconciler: this.reconciler,
      cache: this.deps.cache,
      client: this.deps.client,
      recorder: this.deps.recorder,
      references: new ReferenceReader(this.deps.cache),
      clock: this.clock,
      tracer: this.deps.tracer,
      log: this.log,
      writeObserver: this.ownWrites,
    };
    const attempt = new ReconcileAttempt(this.attemptDeps, req, reconcileId, triggers, term.abort.signal, this.timeoutMs, span);
    const outcome = await attempt.run();
    this.shard?.forget(key);
    const decision = classify(outcome, term.abort.signal.aborted);
    this.apply(term, key, req, attempt, outcome, decision);

    const failure =
      outcome.kind === 'threw'
        ? (outcome.error as Error).message
        : outcome.kind === 'timedOut'
          ? new ReconcileTimeoutError(outcome.timeoutMs).message
          : undefined;
    const durationMs = Math.round(this.clock.monotonic() - started);
    // One line per reconcile at debug level (--log-level=debug): what ran, how it ended, what it wrote.
    if (this.log.isLevelEnabled('debug'))
      attempt.log.debug(
        { result: decision.result, writes: attempt.writes.length, durationMs, triggers: triggers.map(describeTrigger), droppedTriggers: dropped || undefined },
        'reconciled',
      );
    this.provenance.record({ key, reconcileId, startedAt, durationMs, result: decision.result, error: failure, triggers: [...triggers], dropped });
    if (span) {
      span.setAttribute('opkit.reconcile.result', decision.result);
      span.setAttribute('opkit.reconcile.writes', attempt.writes.length);
      if (failure) span.fail(new Error(failure));
      span.end();
    }
    end();
    metrics.activeWorkers.dec(labels);
    metrics.reconcileTotal.inc({ ...labels, result: decision.result });
    if (decision.result === 'error') metrics.reconcileErrors.inc(labels);
    if (outcome.kind === 'timedOut') metrics.reconcileTimeouts.inc(labels);
    if (outcome.kind === 'threw' && isProgrammingFault(outcome.error)) metrics.reconcilePanics.inc(labels);

    // The key leaves flight when the reconciler has returned, past a timeout or not; what it wrote
    // must then be read back before the key runs again.
    const settle = () => {
      term.overdue.delete(key);
      if (!term.abort.signal.aborted) term.holds.hold(key, attempt.writes);
      term.queue.done(key);
    };
    if (outcome.kind !== 'timedOut') return settle();
    term.overdue.add(key);
    void attempt.settled.then(settle);
  }

  private apply(term: Term, key: string, req: Request, attempt: ReconcileAttempt, outcome: AttemptOutcome, d: Decision) {
    const { queue } = term;
    // A requeue runs at the priority the reconciler names, else at the one this attempt ran with.
    const asked = outcome.kind === 'returned' && outcome.result ? outcome.result.priority : undefined;
    const priority = asked ?? queue.priorityOf(key) ?? Priority.normal;
    if (d.queue.action === 'forget') queue.forget(key);
    else if (d.queue.action === 'after') {
      queue.forget(key);
      this.provenance.add(key, { source: 'requeue', after: d.queue.ms, at: this.clock.now() });
      queue.addAfter(key, d.queue.ms, priority);
    } else if (d.queue.action === 'backoff') {
      queue.addRateLimited(key, d.queue.floorMs, priority);
      this.provenance.add(
        key,
        outcome.kind === 'returned'
          ? { source: 'requeue', at: this.clock.now() }
          : { source: 'retry', attempt: queue.retries(key), error: this.describe(outcome), at: this.clock.now() },
      );
    }
    if (d.result === 'success' || d.result === 'requeue_after') {
      this.reports.forget(key);
      term.denied.forget(key);
    }
    const retries = queue.retries(key);
    const err = outcome.kind === 'threw' ? (outcome.error as Error) : outcome.kind === 'timedOut' ? new ReconcileTimeoutError(outcome.timeoutMs) : undefined;
    switch (d.log) {
      case 'interrupted':
        attempt.log.info({ err: err?.message }, 'reconcile interrupted: the controller is stopping');
        break;
      case 'terminal':
        this.deps.metrics.terminalErrors.inc({ controller: this.name });
        attempt.log.error(
          { err, triggers: attempt.triggers.map(describeTrigger) },
          'reconcile failed with a terminal error; not retrying until the object changes',
        );
        break;
      case 'conflict':
        attempt.log.info({ retries, err: (err as ApiError).serverMessage }, 'conflict writing an object; retrying');
        break;
      case 'timeout':
        attempt.log.error(
          { retries, timeoutMs: this.timeoutMs },
          'reconcile timed out: its worker is released; the key is retried with backoff once the reconcile returns',
        );
        break;
      case 'error':
        attempt.log.error({ err, retries, triggers: attempt.triggers.map(describeTrigger) }, 'reconcile failed; retrying with backoff');
        break;
      case 'none':
        break;
    }
    if (d.denied && err) {
      const permission = deniedPermissionOf(err);
      if (permission) term.denied.add(key, permission);
    }
    if (err && (d.report === 'now' || (d.report === 'when-persistent' && retries >= REPORT_AFTER_FAILURES))) this.reports.report(req, err, term.abort.signal);
  }

  private describe(outcome: AttemptOutcome): string {
    return outcome.kind === 'threw'
      ? (outcome.error as Error).message
      : outcome.kind === 'timedOut'
        ? new ReconcileTimeoutError(outcome.timeoutMs).message
        : '';
  }

  private startSpan(req: Request, reconcileId: string, triggers: readonly Trigger[]): Span | undefined {
    if (!this.deps.tracer?.enabled) return undefined;
    return this.deps.tracer.startSpan(`reconcile ${this.name}`, {
      attributes: {
        'opkit.controller': this.name,
        'k8s.namespace.name': req.namespace ?? '',
        'opkit.object.name': req.name,
        'opkit.reconcile.id': reconcileId,
        'opkit.reconcile.triggers': triggers.map(describeTrigger),
      },
    });
  }

  /** Takes the current term out of service: no new events, no holds, no new work handed out. */
  private closeTerm(): Term | undefined {
    const term = this.term;
    if (!term) return undefined;
    this.term = undefined;
    for (const u of term.unsubscribe) u();
    term.holds.end();
    term.resync?.cancel();
    term.debouncer?.clear();
    term.queue.shutDown();
    void term.denied.stop();
    return term;
  }

  /**
   * Ends the term at once: no new work, in-flight reconciles see their signal abort and their
   * client refuse further requests. For a lost lease, where waiting would mean two leaders; a term
   * being drained by stop() is aborted too.
   */
  halt(): void {
    const term = this.closeTerm() ?? this.draining;
    if (!term || term.abort.signal.aborted) return;
    term.abort.abort(new Error('leadership lost'));
    this.log.info({ inFlight: term.queue.inFlight }, 'controller halted');
  }

  /** Stops taking work and waits (up to the deadline) for in-flight reconciles to finish. */
  async stop(deadlineMs = 30_000): Promise<void> {
    const term = this.closeTerm();
    if (!term) return;
    this.draining = term;
    try {
      let timer: { cancel(): void } | undefined;
      const drained = await Promise.race([
        term.queue.drain().then(() => true),
        new Promise<boolean>((r) => (timer = this.clock.setTimer(deadlineMs, () => r(false)))),
      ]);
      timer?.cancel();
      if (!term.abort.signal.aborted) term.abort.abort(new Error('controller stopping'));
      if (!drained) this.log.warn({ inFlight: term.queue.inFlight }, 'reconciles still running at the shutdown deadline');
      await Promise.race([Promise.all(term.workers), this.clock.sleep(1_000)]);
      this.log.info('controller stopped');
    } finally {
      this.draining = undefined;
    }
  }
}
