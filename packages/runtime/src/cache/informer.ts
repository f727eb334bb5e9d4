import type { Logger } from 'pino';
import type { Kind } from '../client/kind.js';
import type { Transport } from '../client/transport.js';
import type { KubeObject } from '../client/types.js';
import { Store, type StoreDelta } from './store.js';
import { SLICE, yieldToEventLoop } from './turns.js';
import { Watcher, type WatcherHealth, type WatcherOptions } from './watcher.js';

export interface EventHandler<T> {
  /**
   * `initialList`: the object was there before this handler started listening (the informer's first
   * LIST, or the store replayed to a handler added later), not a creation just observed. Controllers
   * queue those at low priority, so a start or a leadership gain does not put users' edits behind
   * every object in the store.
   */
  onAdd?(obj: T, meta?: { initialList: boolean }): void;
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
  private listed = false;
  /** The shard selection changed: the next list's adds are objects that came into it, not creations. */
  private reselected = false;

  constructor(
    transport: Transport,
    readonly kind: Kind<T>,
    private readonly log: Logger,
    readonly options: WatcherOptions & {
      /**
       * Objects applied and handed on per turn of the event loop in a (re)list (default 500:
       * applying 50,000 ConfigMaps of 40 fields at once took 300–400 ms here, during which nothing
       * else ran); Infinity: all in one turn (what bench/runtime/relist-lag compares with).
       */
      sliceSize?: number;
    } = {},
  ) {
    this.watcher = new Watcher(
      transport,
      kind,
      {
        replace: async (items) => {
          // Only the first list is the initial list: a relist's adds are creations the watch missed;
          // after a reselection, they are objects the new selection brings (a shard gained).
          const initialList = !this.listed || this.reselected;
          this.reselected = false;
          let first = true;
          for (const deltas of this.store.replaceInSlices(items, options.sliceSize ?? SLICE)) {
            if (!first) await yieldToEventLoop();
            first = false;
            this.dispatch(deltas, initialList);
          }
          this.listed = true;
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

  /** The first list is all in the store (and handed to handlers); set before waitForSync resolves. */
  get synced(): boolean {
    return this.listed;
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

  /** Lists and watches another shard selection from now on (see Watcher.reselect). */
  reselect(shardSelector: string | undefined): void {
    if (shardSelector === this.watcher.selection) return;
    this.reselected = this.listed;
    this.watcher.reselect(shardSelector);
  }

  /** Skips the current reconnect backoff. */
  retryNow(): void {
    this.watcher.retryNow();
  }

  /**
   * Adds a handler; if the store already holds objects, the handler first sees them as adds. Added
   * while a list is being applied slice by slice, it sees what the store holds now, then the rest.
   */
  addHandler(handler: EventHandler<T>, opts: { replay?: boolean } = {}): () => void {
    this.handlers.add(handler);
    if (opts.replay !== false) for (const obj of this.store.list()) this.call(handler, { type: 'add', obj }, true);
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

  private dispatch(deltas: StoreDelta<T>[], initialList = false) {
    for (const d of deltas) for (const h of this.handlers) this.call(h, d, initialList);
  }

  // A handler that throws must neither stop the watch nor starve the other handlers.
  private call(h: EventHandler<T>, d: StoreDelta<T>, initialList = false) {
    try {
      if (d.type === 'add') h.onAdd?.(d.obj, { initialList });
      else if (d.type === 'update') h.onUpdate?.(d.old, d.obj);
      else h.onDelete?.(d.obj);
    } catch (err) {
      this.log.error({ err, kind: this.kind.kind }, 'event handler threw; the watch continues');
    }
  }
}
