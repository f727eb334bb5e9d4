import { keyOf, type Cached, type KubeObject, type ObjectKey } from '../client/types.js';
import { resourceName, type Kind } from '../client/kind.js';
import type { CacheListOptions, InformerOptions } from './cache.js';
import type { EventHandler, Informer } from './informer.js';
import { parseLabelSelector, parseSelector } from './label-selector.js';
import type { IndexFunc } from './store.js';

/**
 * All informers of a kind under one set of options: one per watched namespace, or one cluster-wide.
 * Consumers see them as one.
 */
export class KindInformer<T extends KubeObject> {
  /**
   * Started by a read after the cache started, not declared by a controller. It counts for
   * readiness only once it has synced: a read the operator may not make fails that read, it does
   * not make the whole operator unready.
   */
  lazy = false;

  constructor(
    readonly kind: Kind<T>,
    readonly options: InformerOptions,
    readonly parts: Map<string, Informer<T>>,
  ) {}

  get synced(): boolean {
    return [...this.parts.values()].every((i) => i.synced);
  }

  /** Counted by readiness: declared, or lazy and synced once. */
  get counts(): boolean {
    return !this.lazy || this.synced;
  }

  /** Lists and watches only objects within this shard selector from now on (every part). */
  reselect(shardSelector: string | undefined): void {
    for (const p of this.parts.values()) p.reselect(shardSelector);
  }

  retryNow(): void {
    for (const p of this.parts.values()) p.retryNow();
  }

  /** A watch that failed its last attempt: the cache may be missing changes right now. */
  get failing(): { informer: string; error?: Error }[] {
    return [...this.parts.entries()]
      .filter(([, i]) => i.health.failures > 0)
      .map(([ns, i]) => ({ informer: `${resourceName(this.kind)}${ns ? ` in ${ns}` : ''}`, error: i.health.lastError }));
  }

  /** Subscribes to changes; with `replay` (the default) the objects already cached arrive first as adds. */
  addHandler(h: EventHandler<T>, opts: { replay?: boolean } = {}): () => void {
    const removers = [...this.parts.values()].map((i) => i.addHandler(h, opts));
    return () => removers.forEach((r) => r());
  }

  /** Whether an object with these labels is within this informer's label selector. */
  selects(labels: Record<string, string> | undefined): boolean {
    if (!this.options.labelSelector) return true;
    this.matcher ??= parseLabelSelector(this.options.labelSelector);
    return this.matcher(labels);
  }
  private matcher?: (labels: Record<string, string> | undefined) => boolean;

  /** The latest resourceVersion the watch delivered (events and bookmarks) for the part holding `namespace`. */
  versionFor(namespace?: string): string {
    return this.partFor(namespace)?.resourceVersion ?? '';
  }

  addIndex(name: string, fn: IndexFunc<T>) {
    for (const i of this.parts.values()) i.store.addIndex(name, fn);
  }

  private partFor(namespace?: string): Informer<T> | undefined {
    return this.parts.get('') ?? (namespace ? this.parts.get(namespace) : undefined);
  }

  get(key: ObjectKey): Cached<T> | undefined {
    return this.partFor(key.namespace)?.store.get(keyOf(key)) as Cached<T> | undefined;
  }

  list(opts: CacheListOptions = {}): Cached<T>[] {
    const parts = opts.namespace && !this.parts.has('') ? [this.parts.get(opts.namespace)].filter((p): p is Informer<T> => !!p) : [...this.parts.values()];
    // From the store's indexes (namespace, the named index, the labels the selector fixes), then
    // the selector's other terms: the cost follows the matches, not the cache's size.
    const selector = parseSelector(opts.labelSelector);
    const query = { namespace: opts.namespace || undefined, index: opts.index, labels: selector.equalities };
    let items = parts.flatMap((p) => p.store.select(query));
    if (opts.labelSelector) items = items.filter((o) => selector.matches(o.metadata.labels as Record<string, string> | undefined));
    return items as Cached<T>[];
  }

  get size(): number {
    return [...this.parts.values()].reduce((n, p) => n + p.store.size, 0);
  }
}
