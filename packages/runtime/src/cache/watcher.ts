import type { Logger } from 'pino';
import { createInterface } from 'node:readline';
import { ApiError, isForbidden, isGone, isUnauthorized, type Status } from '../client/errors.js';
import { resourceName, resourcePath, type Kind } from '../client/kind.js';
import type { Transport } from '../client/transport.js';
import type { KubeObject, ObjectList } from '../client/types.js';
import { sleep } from '../clock/clock.js';
import { Backoff } from './backoff.js';

export interface WatcherOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Cache only ObjectMeta (PartialObjectMetadata): for large kinds the operator merely maps. */
  metadataOnly?: boolean;
  /** LIST page size. Default 500, as client-go and kube-rs. */
  pageSize?: number;
  /** Reconnect backoff bounds in ms. Default 800 → 30 000, as kube-rs (taken from client-go's reflector). */
  backoffMs?: { initial: number; max: number };
}

export interface WatcherSink<T> {
  /** A complete LIST: the sink swaps its content and derives what changed. */
  replace(items: T[], resourceVersion: string): void;
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
 * The API server's watch cache sends every watcher that asked for bookmarks one about every minute
 * (cacher's defaultBookmarkFrequency). Once a watch has shown it gets them, a silence this long
 * means the connection is dead, not that nothing changed.
 */
const BOOKMARK_SILENCE_MS = 90_000;
/** 410s closer together than this are a loop, not an incident: back off between the relists. */
const RELIST_LOOP_MS = 60_000;

/**
 * LIST then WATCH one kind, forever. Paginated lists, bookmarks, resourceVersion tracked from every
 * event, 410 Gone answered by a relist, reconnects with jittered backoff, an inactivity timeout for
 * half-open connections. It never stops on an error: it reports it and tries again.
 */
export class Watcher<T extends KubeObject> {
  readonly health: WatcherHealth = { synced: false, connected: false, failures: 0, resourceVersion: '' };
  private readonly abort = new AbortController();
  private loop?: Promise<void>;
  private readonly backoff: Backoff;
  private readonly relistBackoff: Backoff;
  private lastRelistAt = -Infinity;
  private wake?: () => void;
  private readonly description: string;

  constructor(
    private readonly transport: Transport,
    readonly kind: Kind<T>,
    private readonly sink: WatcherSink<T>,
    private readonly log: Logger,
    readonly options: WatcherOptions = {},
  ) {
    this.backoff = new Backoff(options.backoffMs?.initial ?? 800, options.backoffMs?.max ?? 30_000);
    this.relistBackoff = new Backoff(options.backoffMs?.initial ?? 800, options.backoffMs?.max ?? 30_000);
    this.description = `${resourceName(kind)}${options.namespace ? ` in namespace ${options.namespace}` : ''}`;
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

  /** Ends a backoff wait now (the API server answers again: no reason to wait out the backoff). */
  retryNow(): void {
    this.backoff.reset();
    this.wake?.();
  }

  private async pause(ms: number): Promise<void> {
    await Promise.race([sleep(ms, this.abort.signal), new Promise<void>((r) => (this.wake = r))]);
    this.wake = undefined;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        if (!this.health.resourceVersion) await this.list();
        await this.watch();
      } catch (err) {
        if (this.stopped) break;
        this.health.connected = false;
        if (isGone(err)) {
          this.health.resourceVersion = '';
          // One 410 is routine (etcd compacted past us): relist at once. 410s in a row would make
          // a full LIST loop against the API server: space them out.
          const looping = Date.now() - this.lastRelistAt < RELIST_LOOP_MS;
          const delay = looping ? this.relistBackoff.next() : 0;
          if (!looping) this.relistBackoff.reset();
          this.log.info({ resource: this.description, relistInMs: Math.round(delay) }, 'resourceVersion too old (410 Gone): relisting');
          if (delay) await this.pause(delay);
          this.lastRelistAt = Date.now();
          continue;
        }
        this.health.failures++;
        this.health.lastError = err as Error;
        const delay = this.backoff.next();
        this.log[isForbidden(err) || isUnauthorized(err) ? 'error' : 'warn'](
          { resource: this.description, err: (err as Error).message, retryInMs: Math.round(delay), failures: this.health.failures },
          isForbidden(err)
            ? `cannot list/watch ${this.description}: forbidden. The operator's RBAC must allow list and watch on ${resourceName(this.kind)}`
            : `list/watch of ${this.description} failed; retrying`,
        );
        await this.pause(delay);
      }
    }
    this.health.connected = false;
  }

  private async list(): Promise<void> {
    const items: T[] = [];
    let cont: string | undefined;
    let rv = '';
    do {
      const page = await this.transport.request<ObjectList<T>>({
        method: 'GET',
        path: resourcePath(this.kind, this.options.namespace),
        query: { limit: this.options.pageSize ?? 500, continue: cont, labelSelector: this.options.labelSelector, fieldSelector: this.options.fieldSelector },
        accept: this.options.metadataOnly ? METADATA_ACCEPT.list : undefined,
        signal: this.abort.signal,
      });
      // An empty list may come back as `items: null` (PartialObjectMetadataList does).
      for (const item of page.items ?? []) items.push(this.normalize(item));
      cont = page.metadata.continue || undefined;
      rv = page.metadata.resourceVersion ?? '';
    } while (cont);
    this.sink.replace(items, rv);
    this.health.resourceVersion = rv;
    this.health.synced = true;
    this.markHealthy();
  }

  /** LIST items lack apiVersion/kind; watch events and metadata-only items differ too. Make them uniform. */
  private normalize(obj: T): T {
    if (!obj.kind && !this.options.metadataOnly) {
      obj.apiVersion = this.kind.group ? `${this.kind.group}/${this.kind.version}` : this.kind.version;
      obj.kind = this.kind.kind;
    }
    // managedFields are half of a typical object's memory (most of a metadata-only one) and no
    // controller reads them from the cache.
    if (obj.metadata?.managedFields) delete obj.metadata.managedFields;
    // Every cached object has a namespace (see Cached): '' for cluster-scoped kinds.
    if (obj.metadata && obj.metadata.namespace === undefined) obj.metadata.namespace = '';
    return obj;
  }

  private markHealthy() {
    this.health.failures = 0;
    this.health.lastError = undefined;
    this.backoff.reset();
  }

  private async watch(): Promise<void> {
    // The server ends each watch after timeoutSeconds; spread them as client-go does (5-10 min).
    const timeoutSeconds = 300 + Math.floor(Math.random() * 300);
    const local = new AbortController();
    const onStop = () => local.abort();
    this.abort.signal.addEventListener('abort', onStop, { once: true });
    const opened = Date.now();
    try {
      const res = await this.transport.stream({
        method: 'GET',
        path: resourcePath(this.kind, this.options.namespace),
        query: {
          watch: 'true',
          allowWatchBookmarks: 'true',
          resourceVersion: this.health.resourceVersion,
          timeoutSeconds,
          labelSelector: this.options.labelSelector,
          fieldSelector: this.options.fieldSelector,
        },
        accept: this.options.metadataOnly ? METADATA_ACCEPT.watch : undefined,
        signal: local.signal,
      });
      this.health.connected = true;
      this.markHealthy();
      // Half-open connections (a vanished load balancer, a suspended VM) send nothing and never
      // close. Until a bookmark arrives, only the server's own timeout bounds the silence; once
      // bookmarks are known to come, a minute and a half without one is a dead connection.
      let idle: NodeJS.Timeout | undefined;
      let bookmarks = false;
      const armIdle = () => {
        clearTimeout(idle);
        const ms = bookmarks ? BOOKMARK_SILENCE_MS : (timeoutSeconds + 30) * 1000;
        idle = setTimeout(() => res.destroy(new Error(`watch of ${this.description} silent for ${ms / 1000}s`)), ms);
      };
      armIdle();
      let streamError: Error | undefined;
      res.on('error', (e) => (streamError = e));
      res.on('data', armIdle);
      const lines = createInterface({ input: res, crlfDelay: Infinity });
      try {
        for await (const line of lines) {
          if (!line) continue;
          const event = JSON.parse(line) as { type: string; object: T | Status };
          if (event.type === 'BOOKMARK' && !bookmarks) {
            bookmarks = true;
            armIdle();
          }
          this.handle(event);
        }
      } finally {
        clearTimeout(idle);
        res.destroy();
      }
      if (streamError && !this.stopped) throw streamError;
    } finally {
      this.abort.signal.removeEventListener('abort', onStop);
      this.health.connected = false;
    }
    // A server that accepts and closes at once must not make us spin.
    if (Date.now() - opened < 1000) await this.pause(1000);
  }

  private handle(event: { type: string; object: T | Status }): void {
    if (event.type === 'ERROR') {
      const status = event.object as Status;
      throw new ApiError('WATCH', resourcePath(this.kind, this.options.namespace), status.code ?? 500, status);
    }
    const obj = event.object as T;
    if (obj.metadata?.resourceVersion) this.health.resourceVersion = obj.metadata.resourceVersion;
    if (event.type === 'BOOKMARK') return;
    if (event.type === 'ADDED' || event.type === 'MODIFIED' || event.type === 'DELETED') this.sink.event(event.type, this.normalize(obj));
  }
}
