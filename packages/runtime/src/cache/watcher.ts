import type { Logger } from 'pino';
import { createInterface } from 'node:readline';
import { ApiError, isForbidden, isUnauthorized, type Status } from '../client/errors.js';
import { resourceName, resourcePath, type Kind } from '../client/kind.js';
import type { Transport } from '../client/transport.js';
import type { KubeObject, ObjectList } from '../client/types.js';
import { systemClock, type Clock, type Timer } from '../clock/clock.js';
import { LINES_PER_TURN, yieldToEventLoop } from './turns.js';
import {
  DEFAULT_WATCHER_CONFIG,
  initialWatcherState,
  silenceLimitMs,
  step,
  type WatcherAction,
  type WatcherConfig,
  type WatcherEvent,
  type WatcherNote,
  type WatcherState,
} from './watcher-state.js';

export interface WatcherOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /**
   * The API server's shard selector (KEP-5866, `shardRange(...) || ...`; sharding/ranges.ts
   * `shardSelector`): only objects whose uid or namespace hashes into these ranges are listed and
   * watched. Changed at run time with `reselect`.
   */
  shardSelector?: string;
  /** Cache only ObjectMeta (PartialObjectMetadata): for large kinds the operator merely maps. */
  metadataOnly?: boolean;
  /** LIST page size. Default 500, as client-go and kube-rs. */
  pageSize?: number;
  /** Reconnect backoff bounds in ms. Default 800 → 30 000, as kube-rs (taken from client-go's reflector). */
  backoffMs?: { initial: number; max: number };
  /**
   * Trims each object before it is stored (controller-runtime's cache transforms, kube-rs's
   * `.modify()`): drop what no reconcile reads (a ConfigMap's data, a Pod's spec) to hold less. It
   * gets the object as decoded, may change it in place or return another, and must keep its
   * metadata's name, namespace and resourceVersion.
   */
  transform?: (obj: KubeObject) => KubeObject;
  /** The rest of the watcher's timing (tests shorten it); see WatcherConfig. */
  timing?: Partial<Omit<WatcherConfig, 'backoff'>>;
  clock?: Clock;
}

export interface WatcherSink<T> {
  /**
   * A complete list: the sink swaps its content and derives what changed. It may take several
   * turns of the event loop (a large list is handed on in slices); the watch resumes once it resolves.
   */
  replace(items: T[], resourceVersion: string): void | Promise<void>;
  event(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: T): void;
}

export interface WatcherHealth {
  /** The first LIST has completed. */
  synced: boolean;
  /** A watch stream is open right now. */
  connected: boolean;
  /** Consecutive failed attempts (0 while healthy). */
  failures: number;
  lastError?: Error;
  resourceVersion: string;
}

const METADATA_ACCEPT = {
  list: 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json',
  watch: 'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io,application/json',
};

/**
 * LIST then WATCH one kind, forever. Paginated lists, bookmarks, resourceVersion tracked from every
 * event, 410 Gone answered by a relist, reconnects with jittered backoff, an inactivity timeout for
 * half-open connections. It never stops on an error: it reports it and tries again.
 */
export class Watcher<T extends KubeObject> {
  private state: WatcherState = initialWatcherState();
  private readonly abort = new AbortController();
  private loop?: Promise<void>;
  private wake?: () => void;
  /** Ends the open stream (or the one being opened): its selection is stale. */
  private interruptStream?: () => void;
  private shardSelector?: string;
  private readonly description: string;
  private readonly clock: Clock;
  private readonly config: WatcherConfig;

  constructor(
    private readonly transport: Transport,
    readonly kind: Kind<T>,
    private readonly sink: WatcherSink<T>,
    private readonly log: Logger,
    readonly options: WatcherOptions = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.config = { ...DEFAULT_WATCHER_CONFIG, ...options.timing, backoff: options.backoffMs ?? DEFAULT_WATCHER_CONFIG.backoff };
    this.description = `${resourceName(kind)}${options.namespace ? ` in namespace ${options.namespace}` : ''}`;
    this.shardSelector = options.shardSelector;
  }

  /**
   * Watches another shard selection from now on: the open watch ends and a full list of the new
   * selection replaces the store (objects that left it are deleted from it, those that came are
   * added). Before the start, it only sets what the first list asks for.
   */
  /** The shard selector listed and watched now. */
  get selection(): string | undefined {
    return this.shardSelector;
  }

  reselect(shardSelector: string | undefined): void {
    if (shardSelector === this.shardSelector) return;
    this.shardSelector = shardSelector;
    if (this.dispatch({ type: 'reselected' }).do === 'interrupt') this.interruptStream?.();
  }

  /** What readiness and /debug/queue show, read from the state. */
  get health(): WatcherHealth {
    const s = this.state;
    return { synced: s.synced, connected: s.connected, failures: s.failures, lastError: s.lastError, resourceVersion: s.resourceVersion };
  }

  /** The latest resourceVersion the watch delivered (events and bookmarks). */
  get resourceVersion(): string {
    return this.state.resourceVersion;
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort(new Error('watcher stopped'));
    await this.loop;
  }

  private get stopped() {
    return this.abort.signal.aborted;
  }

  /** The API server answers again: a backoff being waited out ends now, and the next one starts small. */
  retryNow(): void {
    if (this.wake) this.wake();
    else this.dispatch({ type: 'retryNow' });
  }

  private dispatch(e: WatcherEvent): WatcherAction {
    const t = step(this.state, e, { now: this.clock.monotonic(), random: Math.random, config: this.config });
    this.state = t.state;
    if (t.note) this.report(t.note);
    return t.action;
  }

  private report(n: WatcherNote) {
    if (this.stopped) return; // what a stop interrupted is not news
    const resource = this.description;
    if (n.note === 'relist')
      this.log.info(
        { resource, relistInMs: Math.round(n.inMs), reason: n.reason },
        n.reason === 'gone' ? 'resourceVersion too old (410 Gone): relisting' : 'resourceVersion newer than the API server has (too large): relisting',
      );
    else if (n.note === 'streamRefused')
      this.log.info({ resource, err: n.error.message }, `the API server does not stream lists of ${resource}; using paginated LISTs`);
    else if (n.note === 'recovered') this.log.info({ resource, afterFailures: n.afterFailures }, `list/watch of ${resource} works again`);
    else {
      const denied = isForbidden(n.error) || isUnauthorized(n.error);
      this.log[denied ? 'error' : 'warn'](
        { resource, err: n.error.message, retryInMs: Math.round(n.retryInMs), failures: n.failures },
        isForbidden(n.error)
          ? `cannot list/watch ${resource}: forbidden. The operator's RBAC must allow list and watch on ${resourceName(this.kind)}`
          : `list/watch of ${resource} failed; retrying`,
      );
    }
  }

  /** Performs what the state machine decides, until stopped. */
  private async run(): Promise<void> {
    let action = this.dispatch({ type: 'start' });
    while (!this.stopped) {
      if (action.do === 'list') action = await this.list();
      else if (action.do === 'streamList') action = await this.watch('', true);
      else if (action.do === 'watch') action = await this.watch(action.resourceVersion);
      else if (action.do === 'wait') action = await this.pause(action.ms);
      else break;
    }
    this.dispatch({ type: 'stop' });
  }

  private async pause(ms: number): Promise<WatcherAction> {
    const woken = await Promise.race([this.clock.sleep(ms, this.abort.signal).then(() => false), new Promise<boolean>((r) => (this.wake = () => r(true)))]);
    this.wake = undefined;
    return this.dispatch({ type: woken ? 'retryNow' : 'waited' });
  }

  private async list(): Promise<WatcherAction> {
    const items: T[] = [];
    let cont: string | undefined;
    let rv = '';
    try {
      do {
        const page = await this.transport.request<ObjectList<T>>({
          method: 'GET',
          path: resourcePath(this.kind, this.options.namespace),
          query: {
            limit: this.options.pageSize ?? 500,
            continue: cont,
            labelSelector: this.options.labelSelector,
            fieldSelector: this.options.fieldSelector,
            shardSelector: this.shardSelector,
          },
          accept: this.options.metadataOnly ? METADATA_ACCEPT.list : undefined,
          signal: this.abort.signal,
        });
        // An empty list may come back as `items: null` (PartialObjectMetadataList does).
        for (const item of (page.items as T[] | null) ?? []) items.push(this.normalize(item));
        cont = page.metadata.continue || undefined;
        rv = page.metadata.resourceVersion ?? '';
      } while (cont);
    } catch (err) {
      return this.dispatch({ type: 'listFailed', error: err as Error });
    }
    await this.sink.replace(items, rv);
    if (this.stopped) return { do: 'stop' };
    return this.dispatch({ type: 'listed', resourceVersion: rv });
  }
  /** LIST items lack apiVersion/kind; watch events and metadata-only items differ too. Make them uniform. */
  private normalize(obj: T): T {
    if (!obj.kind && !this.options.metadataOnly) {
      obj.apiVersion = this.kind.group ? `${this.kind.group}/${this.kind.version}` : this.kind.version;
      obj.kind = this.kind.kind;
    }
    // managedFields are half of a typical object's memory (most of a metadata-only one) and no
    // controller reads them from the cache. Copied without them, not deleted: on Node 24's V8 a
    // delete turns the object into a hash table, about 400 bytes more for every cached object
    // (bench/README.md, "Cache cost per object").
    if (obj.metadata.managedFields) {
      const { managedFields: _, ...metadata } = obj.metadata;
      obj.metadata = metadata;
    }
    // Every cached object has a namespace (see Cached): '' for cluster-scoped kinds.
    obj.metadata.namespace ??= '';
    if (!this.options.transform) return obj;
    const out = this.options.transform(obj) as T;
    out.metadata.namespace ??= '';
    return out;
  }

  /**
   * One WATCH, from open to end; its outcome decides what comes next. `streamList`: a full list
   * first (`sendInitialEvents`): the API server sends every object as ADDED, then a bookmark
   * annotated `k8s.io/initial-events-end` at the list's resourceVersion, then the watch goes on.
   * Those objects are gathered and replace the store at the bookmark, as a LIST's would.
   */
  private async watch(resourceVersion: string, streamList = false): Promise<WatcherAction> {
    // The server ends each watch after timeoutSeconds; spread them as client-go does (5-10 min).
    const timeoutSeconds = 300 + Math.floor(Math.random() * 300);
    const interrupt = new AbortController();
    const onStop = () => interrupt.abort(this.abort.signal.reason);
    this.abort.signal.addEventListener('abort', onStop, { once: true });
    this.interruptStream = () => interrupt.abort(new Error(`watch of ${this.description} interrupted: its shard selection changed`));
    try {
      return await this.watchStream(resourceVersion, streamList, timeoutSeconds, interrupt.signal);
    } finally {
      this.interruptStream = undefined;
      this.abort.signal.removeEventListener('abort', onStop);
    }
  }

  private async watchStream(resourceVersion: string, streamList: boolean, timeoutSeconds: number, signal: AbortSignal): Promise<WatcherAction> {
    let res;
    try {
      res = await this.transport.stream({
        method: 'GET',
        path: resourcePath(this.kind, this.options.namespace),
        query: {
          watch: 'true',
          allowWatchBookmarks: 'true',
          ...(streamList ? { sendInitialEvents: 'true', resourceVersionMatch: 'NotOlderThan' } : { resourceVersion }),
          timeoutSeconds,
          labelSelector: this.options.labelSelector,
          fieldSelector: this.options.fieldSelector,
          shardSelector: this.shardSelector,
        },
        accept: this.options.metadataOnly ? METADATA_ACCEPT.watch : undefined,
        signal,
      });
    } catch (err) {
      return this.dispatch({ type: 'ended', error: err as Error });
    }
    this.dispatch({ type: 'opened' });
    const stream = res;
    const timers: { idle?: Timer; sustained: Timer } = {
      sustained: this.clock.setTimer(this.config.healthyAfterMs, () => this.dispatch({ type: 'sustained' })),
    };
    // Half-open connections (a vanished load balancer, a suspended VM) send nothing and never
    // close: silence past the limit (shorter once bookmarks are known to come) ends the watch.
    const armIdle = () => {
      timers.idle?.cancel();
      const ms = silenceLimitMs(this.state, timeoutSeconds);
      timers.idle = this.clock.setTimer(ms, () => stream.destroy(new Error(`watch of ${this.description} silent for ${ms / 1000}s`)));
    };
    armIdle();
    let streamError: Error | undefined;
    stream.on('error', (e) => (streamError = e));
    stream.on('data', armIdle);
    let initial: T[] | undefined = streamList ? [] : undefined;
    let lines = 0;
    try {
      for await (const line of createInterface({ input: stream, crlfDelay: Infinity })) {
        if (!line) continue;
        // Lines that arrived while we were busy are handed out by readline without a turn of the
        // event loop in between: a streamed list's backlog would stall the process for its length.
        if (++lines % LINES_PER_TURN === 0) await yieldToEventLoop();
        const end = this.handle(JSON.parse(line) as { type: string; object: T | Status }, initial);
        if (end === undefined || !initial) continue;
        const items = initial;
        initial = undefined;
        await this.sink.replace(items, end);
        if (this.stopped) break;
        this.dispatch({ type: 'initialEventsEnded', resourceVersion: end });
      }
    } catch (err) {
      streamError ??= err as Error;
    } finally {
      timers.idle?.cancel();
      timers.sustained.cancel();
      stream.destroy();
    }
    return this.dispatch({ type: 'ended', error: streamError });
  }

  /**
   * One line of the stream. While a streaming list gathers its initial events (`initial`), its
   * objects go there instead of to the sink, and the line that ends them (the bookmark annotated
   * `k8s.io/initial-events-end`) returns the list's resourceVersion.
   */
  private handle(event: { type: string; object: T | Status }, initial?: T[]): string | undefined {
    if (event.type === 'ERROR') {
      const status = event.object as Status;
      throw new ApiError('WATCH', resourcePath(this.kind, this.options.namespace), status.code ?? 500, status);
    }
    if (event.type !== 'ADDED' && event.type !== 'MODIFIED' && event.type !== 'DELETED' && event.type !== 'BOOKMARK') return undefined;
    const obj = event.object as T;
    if (event.type === 'BOOKMARK') {
      if (initial && obj.metadata.annotations?.['k8s.io/initial-events-end'] === 'true') return obj.metadata.resourceVersion ?? '';
    } else if (!initial) this.sink.event(event.type, this.normalize(obj));
    else if (event.type === 'ADDED') initial.push(this.normalize(obj));
    this.dispatch({ type: 'delivered', event: event.type, resourceVersion: obj.metadata.resourceVersion });
    return undefined;
  }
}
