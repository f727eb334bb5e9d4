import type { Logger } from 'pino';
import { createInterface } from 'node:readline';
import { ApiError, isForbidden, isGone, isUnauthorized, type Status } from '../client/errors.js';
import { resourceName, resourcePath, type Kind } from '../client/kind.js';
import type { Transport } from '../client/transport.js';
import type { KubeObject, ObjectList } from '../client/types.js';
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

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

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
  private readonly description: string;

  constructor(
    private readonly transport: Transport,
    readonly kind: Kind<T>,
    private readonly sink: WatcherSink<T>,
    private readonly log: Logger,
    readonly options: WatcherOptions = {},
  ) {
    this.backoff = new Backoff(options.backoffMs?.initial ?? 800, options.backoffMs?.max ?? 30_000);
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

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        if (!this.health.resourceVersion) await this.list();
        await this.watch();
      } catch (err) {
        if (this.stopped) break;
        this.health.connected = false;
        if (isGone(err)) {
          this.log.info({ resource: this.description }, 'resourceVersion too old (410 Gone): relisting');
          this.health.resourceVersion = '';
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
        await sleep(delay, this.abort.signal);
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
    if (this.options.metadataOnly) return obj;
    if (!obj.kind) {
      obj.apiVersion = this.kind.group ? `${this.kind.group}/${this.kind.version}` : this.kind.version;
      obj.kind = this.kind.kind;
    }
    // managedFields are half of a typical object's memory and no controller reads them from the cache.
    if (obj.metadata.managedFields) delete obj.metadata.managedFields;
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
      // close; if even the server's own timeout passes in silence, the connection is dead.
      let idle: NodeJS.Timeout | undefined;
      const armIdle = () => {
        clearTimeout(idle);
        idle = setTimeout(() => res.destroy(new Error(`watch of ${this.description} silent for ${timeoutSeconds + 30}s`)), (timeoutSeconds + 30) * 1000);
      };
      armIdle();
      let streamError: Error | undefined;
      res.on('error', (e) => (streamError = e));
      res.on('data', armIdle);
      const lines = createInterface({ input: res, crlfDelay: Infinity });
      try {
        for await (const line of lines) {
          if (!line) continue;
          this.handle(JSON.parse(line) as { type: string; object: T | Status });
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
    if (Date.now() - opened < 1000) await sleep(1000, this.abort.signal);
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
