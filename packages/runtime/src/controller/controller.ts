import type { Logger } from 'pino';
import { randomUUID } from 'node:crypto';
import type { Cache, InformerOptions } from '../cache/cache.js';
import type { Client } from '../client/client.js';
import { ApiError, isConflict } from '../client/errors.js';
import type { Kind } from '../client/kind.js';
import type { KubeObject } from '../client/types.js';
import type { EventRecorder } from '../events/recorder.js';
import type { RuntimeMetrics } from '../metrics/metrics.js';
import type { RateLimiter } from '../queue/rate-limiters.js';
import { WorkQueue } from '../queue/work-queue.js';
import type { MapFunc } from './handlers.js';
import { evaluatePredicate, type Predicate } from './predicates.js';
import { requestKey, TerminalError, type Request, type Result } from './result.js';

export interface ReconcileContext {
  /** Carries controller, namespace, name and reconcileID on every line. */
  log: Logger;
  client: Client;
  cache: Cache;
  recorder: EventRecorder;
  reconcileId: string;
  /** Aborted when the manager shuts down; pass it to long waits. */
  signal: AbortSignal;
}

export type Reconciler = (req: Request, ctx: ReconcileContext) => Promise<Result> | Result;

export interface ControllerOptions {
  /** Workers; one key is still never reconciled twice at once. Default 1, as controller-runtime. */
  maxConcurrentReconciles?: number;
  rateLimiter?: RateLimiter;
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
}

/**
 * Events from watches → predicates → requests → work queue → N workers → the reconciler, with the
 * Result contract applied and every outcome counted. A reconciler that throws is contained: logged
 * with its stack, counted, retried with backoff; the process and the watches carry on.
 */
export class Controller {
  readonly queue: WorkQueue;
  private readonly log: Logger;
  private readonly abort = new AbortController();
  private workers: Promise<void>[] = [];
  private unsubscribe: (() => void)[] = [];
  private readonly max: number;

  constructor(
    readonly name: string,
    private readonly watches: WatchSpec[],
    private readonly reconciler: Reconciler,
    private readonly deps: ControllerDeps,
    options: ControllerOptions = {},
  ) {
    this.max = Math.max(1, options.maxConcurrentReconciles ?? 1);
    this.log = deps.log.child({ controller: name });
    this.queue = new WorkQueue(name, { rateLimiter: options.rateLimiter, metrics: deps.metrics.forQueue(name, () => this.queue.processingSince()) });
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
    this.queue.add(requestKey(req));
  }

  private async mapAndEnqueue<T extends KubeObject>(w: WatchSpec<T>, obj: T) {
    try {
      for (const r of await w.map(obj, { cache: this.deps.cache })) this.enqueue(r);
    } catch (err) {
      this.log.error({ err, kind: w.kind.kind, object: obj.metadata.name }, 'mapping an event to requests failed');
    }
  }

  /** Subscribes to the watches and starts the workers. */
  start(): void {
    for (const w of this.watches as WatchSpec<KubeObject>[]) {
      const informer = this.deps.cache.informer(w.kind, w.informer);
      this.unsubscribe.push(
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
    for (let i = 0; i < this.max; i++) this.workers.push(this.work());
    this.log.info({ workers: this.max }, 'controller started');
  }

  private async work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      try {
        await this.reconcileOne(key);
      } finally {
        this.queue.done(key);
      }
    }
  }

  private async reconcileOne(key: string): Promise<void> {
    const slash = key.indexOf('/');
    const req: Request = slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
    const reconcileId = randomUUID();
    const log = this.log.child({ namespace: req.namespace, name: req.name, reconcileID: reconcileId });
    const { metrics } = this.deps;
    const labels = { controller: this.name };
    metrics.activeWorkers.inc(labels);
    const end = metrics.reconcileTime.startTimer(labels);
    let result: 'success' | 'error' | 'requeue' | 'requeue_after' = 'success';
    try {
      const res = await this.reconciler(req, { log, client: this.deps.client, cache: this.deps.cache, recorder: this.deps.recorder, reconcileId, signal: this.abort.signal });
      if (res && res.requeueAfter && res.requeueAfter > 0) {
        this.queue.forget(key);
        this.queue.addAfter(key, res.requeueAfter);
        result = 'requeue_after';
      } else if (res && res.requeue) {
        this.queue.addRateLimited(key);
        result = 'requeue';
      } else {
        this.queue.forget(key);
      }
    } catch (err) {
      result = 'error';
      metrics.reconcileErrors.inc(labels);
      if (err instanceof TerminalError) {
        metrics.terminalErrors.inc(labels);
        this.queue.forget(key);
        log.error({ err }, 'reconcile failed with a terminal error; not retrying until the object changes');
      } else {
        this.queue.addRateLimited(key);
        const retries = this.queue.retries(key);
        // Conflicts are routine under optimistic concurrency: the retry reads fresh state.
        if (isConflict(err)) log.info({ retries, err: (err as ApiError).serverMessage }, 'conflict writing an object; retrying');
        else log.error({ err, retries }, 'reconcile failed; retrying with backoff');
      }
    } finally {
      end();
      metrics.activeWorkers.dec(labels);
      metrics.reconcileTotal.inc({ ...labels, result });
    }
  }

  /** Stops taking work and waits (up to the deadline) for in-flight reconciles to finish. */
  async stop(deadlineMs = 30_000): Promise<void> {
    for (const u of this.unsubscribe) u();
    this.unsubscribe = [];
    this.queue.shutDown();
    let timer: NodeJS.Timeout | undefined;
    const drained = await Promise.race([
      this.queue.drain().then(() => true),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(false), deadlineMs))),
    ]);
    clearTimeout(timer);
    this.abort.abort(new Error('controller stopping'));
    if (!drained) this.log.warn({ inFlight: this.queue.inFlight }, 'reconciles still running at the shutdown deadline');
    await Promise.race([Promise.all(this.workers), new Promise((r) => setTimeout(r, 1000))]);
    this.log.info('controller stopped');
  }
}
