import type { Logger } from 'pino';
import type { Kind } from '../client/kind.js';
import type { Transport } from '../client/transport.js';
import type { KubeObject } from '../client/types.js';
import { Store, type StoreDelta } from './store.js';
import { Watcher, type WatcherHealth, type WatcherOptions } from './watcher.js';

export interface EventHandler<T> {
  onAdd?(obj: T): void;
  onUpdate?(old: T, obj: T): void;
  onDelete?(obj: T): void;
}

/**
 * One watcher feeding one store, shared by every consumer of the same (kind, namespace, selector).
 * Handlers see every change, including the deletions a relist discovers.
 */
export class Informer<T extends KubeObject> {
  readonly store = new Store<T>();
  private readonly handlers = new Set<EventHandler<T>>();
  private readonly watcher: Watcher<T>;
  private syncWaiters: (() => void)[] = [];

  constructor(
    transport: Transport,
    readonly kind: Kind<T>,
    private readonly log: Logger,
    readonly options: WatcherOptions = {},
  ) {
    this.watcher = new Watcher(
      transport,
      kind,
      {
        replace: (items) => {
          this.dispatch(this.store.replace(items));
          this.notifySynced();
        },
        event: (type, obj) => {
          const d = type === 'DELETED' ? this.store.remove(obj) : this.store.upsert(obj);
          if (d) this.dispatch([d]);
        },
      },
      log,
      options,
    );
  }

  get health(): WatcherHealth {
    return this.watcher.health;
  }

  get synced(): boolean {
    return this.watcher.synced;
  }

  /** The latest resourceVersion the watch delivered (events and bookmarks). */
  get resourceVersion(): string {
    return this.watcher.resourceVersion;
  }

  start(): void {
    this.watcher.start();
  }

  stop(): Promise<void> {
    return this.watcher.stop();
  }

  /** Skips the current reconnect backoff. */
  retryNow(): void {
    this.watcher.retryNow();
  }

  /** Adds a handler; if the store already holds objects, the handler first sees them as adds. */
  addHandler(handler: EventHandler<T>, opts: { replay?: boolean } = {}): () => void {
    this.handlers.add(handler);
    if (this.synced && opts.replay !== false) for (const obj of this.store.list()) this.call(handler, { type: 'add', obj });
    return () => this.handlers.delete(handler);
  }

  /** Resolves once the first LIST has landed in the store. */
  waitForSync(): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  private notifySynced() {
    const waiters = this.syncWaiters;
    this.syncWaiters = [];
    for (const w of waiters) w();
  }

  private dispatch(deltas: StoreDelta<T>[]) {
    for (const d of deltas) for (const h of this.handlers) this.call(h, d);
  }

  // A handler that throws must neither stop the watch nor starve the other handlers.
  private call(h: EventHandler<T>, d: StoreDelta<T>) {
    try {
      if (d.type === 'add') h.onAdd?.(d.obj);
      else if (d.type === 'update') h.onUpdate?.(d.old, d.obj);
      else h.onDelete?.(d.obj);
    } catch (err) {
      this.log.error({ err, kind: this.kind.kind }, 'event handler threw; the watch continues');
    }
  }
}
