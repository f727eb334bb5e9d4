import type { Logger } from 'pino';
import { ApiError, isForbidden, isUnauthorized } from '../client/errors.js';
import { kindKey, resourceName, type Kind } from '../client/kind.js';
import type { Transport } from '../client/transport.js';
import type { Cached, KubeObject, ObjectKey } from '../client/types.js';
import { Informer } from './informer.js';
import { KindInformer } from './kind-informer.js';
import type { IndexFunc } from './store.js';
import { judgeSyncWait, type SyncWaitState } from './sync-wait.js';

export { KindInformer } from './kind-informer.js';
import { systemClock, type Clock } from '../clock/clock.js';

/** Per-kind cache settings: what to watch and how much of it to keep. */
export interface InformerOptions {
  labelSelector?: string;
  fieldSelector?: string;
  metadataOnly?: boolean;
}

export interface CacheOptions {
  /** Namespaces to watch for namespaced kinds; empty means the whole cluster. */
  namespaces?: string[];
  pageSize?: number;
  backoffMs?: { initial: number; max: number };
  clock?: Clock;
  /**
   * Refuse to start an informer once the cache runs (controller-runtime's
   * ReaderFailOnMissingInformer): a read of a kind, or a selector, nothing declared before the start
   * fails with MissingInformerError instead of quietly watching (and holding) every such object in
   * the cluster, the first cause of operators' memory blowing up. Declare what is read
   * (controllerFor/owns/watches/references, `cache.informer` before start) or read it with the
   * client. Default off here (as controller-runtime's); runOperator and testManager turn it on.
   */
  failOnMissingInformer?: boolean;
  /**
   * Full lists streamed (`sendInitialEvents`, WatchList) where the API server offers it, paginated
   * LISTs where it refuses. Default on, as client-go's since 1.35; `false`: paginated LISTs only.
   */
  streamingLists?: boolean;
}

export interface CacheListOptions {
  namespace?: string;
  labelSelector?: string | Record<string, string>;
  /** Only objects indexed under this value (see `indexField`). */
  index?: { name: string; value: string };
}

/** A read the cache was not set up for, with failOnMissingInformer on. */
export class MissingInformerError extends Error {
  constructor(kind: Kind, options: InformerOptions) {
    const how = [
      options.labelSelector && `labels ${options.labelSelector}`,
      options.fieldSelector && `fields ${options.fieldSelector}`,
      options.metadataOnly && 'metadata only',
    ]
      .filter(Boolean)
      .join(', ');
    super(
      `no informer for ${resourceName(kind)}${how ? ` (${how})` : ''}: nothing declared it before the start, and this cache does not start one at run time (failOnMissingInformer). Declare it (owns, watches, references, or cache.informer before start), or read it with the client`,
    );
    this.name = 'MissingInformerError';
  }
}

export class CacheSyncError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CacheSyncError';
  }
}

/**
 * The shared informer cache: one informer per (kind, namespace set, selector), started on first use,
 * read by every controller of the manager. Reads never hit the API server.
 */
export class Cache {
  private readonly informers = new Map<string, KindInformer<KubeObject>>();
  private readonly defaults = new Map<string, InformerOptions>();
  /** Per kind, the watched namespaces when watchAlso added some to the cache's own. */
  private readonly extraNamespaces = new Map<string, string[]>();
  private readonly transforms = new Map<string, (obj: KubeObject) => KubeObject>();
  private started = false;

  constructor(
    private readonly transport: Transport,
    private readonly log: Logger,
    readonly options: CacheOptions = {},
  ) {}

  get namespaces(): string[] {
    return this.options.namespaces ?? [];
  }

  /**
   * Watches a namespaced kind in these namespaces too, when the cache is limited to some
   * (WATCH_NAMESPACE): an operator's own namespace, say, where its cluster-wide configuration keeps
   * its Secrets. Without a limit, every namespace is watched anyway. Call before the kind is used.
   */
  watchAlso<T extends KubeObject>(kind: Kind<T>, namespaces: string[]): void {
    if (!kind.namespaced || !this.namespaces.length) return;
    this.extraNamespaces.set(kindKey(kind), [...new Set([...this.namespacesOf(kind), ...namespaces.filter(Boolean)])]);
  }

  /**
   * The namespaces a kind is watched in; empty: the whole cluster (or a cluster-scoped kind).
   * Read on every cache get and list: computed once, in watchAlso.
   */
  namespacesOf(kind: Kind): string[] {
    if (!kind.namespaced) return [];
    return this.extraNamespaces.get(kindKey(kind)) ?? this.namespaces;
  }

  /**
   * Trims every object of a kind before it is cached (see WatcherOptions.transform): what no
   * reconcile reads need not be held. Call before the kind is used; every informer of the kind
   * applies it.
   */
  transform<T extends KubeObject>(kind: Kind<T>, fn: (obj: T) => T): void {
    if (this.informersOf(kind).length)
      throw new Error(`cache.transform(${resourceName(kind)}): informers of the kind exist already; set transforms before the kind is used`);
    this.transforms.set(kindKey(kind), fn as unknown as (obj: KubeObject) => KubeObject);
  }

  /** Sets the default informer options of a kind (e.g. a label selector for Secrets). Call before use. */
  configure<T extends KubeObject>(kind: Kind<T>, options: InformerOptions): void {
    this.defaults.set(kindKey(kind), options);
  }

  private id(kind: Kind, o: InformerOptions) {
    return `${kindKey(kind)}|${o.labelSelector ?? ''}|${o.fieldSelector ?? ''}|${o.metadataOnly ? 'meta' : 'full'}`;
  }

  /** The options an informer of `kind` is made with: those given, else the kind's defaults (configure). */
  private optionsFor(kind: Kind, options?: InformerOptions): InformerOptions {
    return options ?? this.defaults.get(kindKey(kind)) ?? {};
  }

  /** The shared informer for a kind; created (and started, if the cache runs) on first request. */
  informer<T extends KubeObject>(kind: Kind<T>, options?: InformerOptions): KindInformer<T> {
    const opts = this.optionsFor(kind, options);
    const id = this.id(kind, opts);
    let ki = this.informers.get(id) as KindInformer<T> | undefined;
    if (!ki) {
      if (this.started && this.options.failOnMissingInformer) throw new MissingInformerError(kind, opts);
      const watched = this.namespacesOf(kind);
      const namespaces = watched.length ? watched : [''];
      const parts = new Map<string, Informer<T>>();
      for (const ns of namespaces) {
        parts.set(
          ns,
          new Informer(this.transport, kind, this.log.child({ informer: resourceName(kind), namespace: ns || undefined }), {
            namespace: ns || undefined,
            ...opts,
            pageSize: this.options.pageSize,
            backoffMs: this.options.backoffMs,
            timing: this.options.streamingLists === false ? { streamingLists: false } : undefined,
            clock: this.options.clock,
            transform: this.transforms.get(kindKey(kind)),
          }),
        );
      }
      ki = new KindInformer(kind, opts, parts);
      ki.lazy = this.started;
      this.informers.set(id, ki as unknown as KindInformer<KubeObject>);
      if (this.started) for (const p of parts.values()) p.start();
    }
    return ki;
  }

  /**
   * Stops an informer and drops what it holds (controller-runtime's RemoveInformer): for one that
   * is no longer read, a lazy one a reconcile started, or a kind whose CRD is gone. Not for one a
   * controller watches (its events would stop). Returns whether there was one.
   */
  async removeInformer<T extends KubeObject>(kind: Kind<T>, options?: InformerOptions): Promise<boolean> {
    const id = this.id(kind, this.optionsFor(kind, options));
    const ki = this.informers.get(id);
    if (!ki) return false;
    this.informers.delete(id);
    await Promise.all([...ki.parts.values()].map((p) => p.stop()));
    return true;
  }

  /** The informers that exist for a kind (none is started by asking). */
  informersOf<T extends KubeObject>(kind: Kind<T>): KindInformer<T>[] {
    const k = kindKey(kind);
    return [...this.informers.values()].filter((ki) => kindKey(ki.kind) === k) as unknown as KindInformer<T>[];
  }

  /** Indexes the kind's objects under the values `fn` returns; query with `list(kind, {index})`. */
  indexField<T extends KubeObject>(kind: Kind<T>, name: string, fn: IndexFunc<T>, options?: InformerOptions): void {
    this.informer(kind, options).addIndex(name, fn);
  }

  private checkNamespace(kind: Kind, namespace?: string) {
    const watched = this.namespacesOf(kind);
    if (namespace && watched.length && !watched.includes(namespace)) {
      throw new Error(`namespace "${namespace}" is not watched (WATCH_NAMESPACE=${this.namespaces.join(',')}); cannot read ${kind.kind} from the cache`);
    }
  }

  /** An object from the cache, or undefined. Starts and syncs the kind's informer on first use. */
  async get<T extends KubeObject>(kind: Kind<T>, key: ObjectKey, options?: InformerOptions): Promise<Cached<T> | undefined> {
    this.checkNamespace(kind, key.namespace);
    const ki = this.informer(kind, options);
    if (!ki.synced) await this.syncOne(ki);
    return ki.get(key);
  }

  async list<T extends KubeObject>(kind: Kind<T>, opts: CacheListOptions = {}, options?: InformerOptions): Promise<Cached<T>[]> {
    this.checkNamespace(kind, opts.namespace);
    const ki = this.informer(kind, options);
    if (!ki.synced) await this.syncOne(ki);
    return ki.list(opts);
  }

  start(): void {
    this.started = true;
    for (const ki of this.informers.values()) for (const p of ki.parts.values()) p.start();
  }

  async stop(): Promise<void> {
    this.started = false;
    await Promise.all([...this.informers.values()].flatMap((ki) => [...ki.parts.values()].map((p) => p.stop())));
  }

  get synced(): boolean {
    return [...this.informers.values()].filter((ki) => ki.counts).every((ki) => ki.synced);
  }

  /** Informers whose watch is failing right now (for /readyz). */
  failing(): { informer: string; error?: Error }[] {
    return [...this.informers.values()].filter((ki) => ki.counts).flatMap((ki) => ki.failing);
  }

  /** Every watch waiting out a reconnect backoff tries now (the API server answers again). */
  retryNow(): void {
    for (const ki of this.informers.values()) ki.retryNow();
  }

  /** Every informer's state, for /debug/queue: synced, connected, failures, last error, objects held. */
  health(): {
    informer: string;
    namespace?: string;
    selector?: string;
    synced: boolean;
    connected: boolean;
    failures: number;
    lastError?: string;
    objects: number;
    resourceVersion: string;
  }[] {
    return [...this.informers.values()].flatMap((ki) =>
      [...ki.parts.entries()].map(([ns, p]) => ({
        informer: resourceName(ki.kind),
        namespace: ns || undefined,
        selector: [ki.options.labelSelector, ki.options.fieldSelector].filter(Boolean).join(' ') || undefined,
        synced: p.synced,
        connected: p.health.connected,
        failures: p.health.failures,
        lastError: p.health.lastError?.message,
        objects: p.store.size,
        resourceVersion: p.health.resourceVersion,
      })),
    );
  }

  /** How many objects each informer holds (for metrics and benchmarks). */
  sizes(): Record<string, number> {
    return Object.fromEntries([...this.informers.entries()].map(([id, ki]) => [id, ki.size]));
  }

  private async syncOne<T extends KubeObject>(ki: KindInformer<T>, timeoutMs = 120_000): Promise<void> {
    if (!this.started) throw new Error(`the cache is not started: cannot read ${ki.kind.kind}`);
    if (!ki.lazy) return this.waitFor([ki as unknown as KindInformer<KubeObject>], timeoutMs);
    try {
      // No grace for a lazy read: RBAC answers are immediate, and the reconcile should fail now.
      await this.waitFor([ki as unknown as KindInformer<KubeObject>], timeoutMs, 0);
    } catch (err) {
      if (ki.synced) return;
      // Abandon it: an informer that cannot list would retry forever, for nobody.
      const denied = [...ki.parts.values()].map((p) => p.health.lastError).find((e) => isForbidden(e) || isUnauthorized(e));
      this.informers.delete(this.id(ki.kind, ki.options));
      await Promise.all([...ki.parts.values()].map((p) => p.stop()));
      if (denied instanceof ApiError) throw denied;
      throw err;
    }
  }

  /**
   * Resolves when every informer has listed once. Rejects after `timeoutMs`, or sooner when the
   * API server keeps refusing a list for `refusedGraceMs`: access denied (RBAC), or a kind it does
   * not serve (a CRD not installed, a feature flag on without its API). An operator that cannot
   * work should say why at once, not hang for minutes. The grace covers a CRD created a moment ago
   * and not yet established.
   */
  waitForSync(timeoutMs = 120_000, refusedGraceMs = 10_000, signal?: AbortSignal): Promise<void> {
    return this.waitFor([...this.informers.values()], timeoutMs, refusedGraceMs, signal);
  }

  private async waitFor(kis: KindInformer<KubeObject>[], timeoutMs: number, refusedGraceMs = 10_000, signal?: AbortSignal): Promise<void> {
    const clock = this.options.clock ?? systemClock;
    let state: SyncWaitState = { startedAt: clock.monotonic() };
    while (!kis.every((k) => k.synced)) {
      signal?.throwIfAborted();
      const pending = kis.flatMap((k) => [...k.parts.values()]).filter((p) => !p.synced);
      const parts = pending.map((p) => ({
        name: `${resourceName(p.kind)}${p.options.namespace ? ` in ${p.options.namespace}` : ''}`,
        resource: resourceName(p.kind),
        lastError: p.health.lastError,
      }));
      const verdict = judgeSyncWait(parts, state, clock.monotonic(), { timeoutMs, graceMs: refusedGraceMs });
      if (!verdict.wait) throw new CacheSyncError(verdict.error);
      state = verdict.state;
      await clock.sleep(50, signal);
    }
  }
}
