import { keyOf, type KubeObject } from '../client/types.js';
import { deepFreeze } from './freeze.js';

/** Extracts the values an object is indexed under (e.g. its owners' UIDs, its sources' names). */
export type IndexFunc<T> = (obj: T) => string[];

export type StoreDelta<T> = { type: 'add'; obj: T } | { type: 'update'; old: T; obj: T } | { type: 'delete'; obj: T };

/** What a list asks for: one namespace, an index value, labels with given values. */
export interface StoreQuery {
  namespace?: string;
  index?: { name: string; value: string };
  /** `key in (values)` terms (`a=b` is one value): each can be answered from a label index. */
  labels?: { key: string; values: string[] }[];
}

/**
 * The objects of one informer, frozen, keyed by namespace/name, with secondary indexes kept up to
 * date on every change: the named indexes a controller declares, one by namespace, and one per
 * label key that a list has selected on (built on first use). A list is answered from the
 * smallest of the indexes it can use, so its cost follows the matches, not the store's size.
 */
export class Store<T extends KubeObject> {
  private readonly items = new Map<string, T>();
  private readonly indexers = new Map<string, IndexFunc<T>>();
  private readonly indices = new Map<string, Map<string, Set<string>>>();
  private readonly byNamespace = new Map<string, Set<string>>();
  private readonly byLabel = new Map<string, Map<string, Set<string>>>();

  get size(): number {
    return this.items.size;
  }

  addIndex(name: string, fn: IndexFunc<T>): void {
    if (this.indexers.has(name)) return;
    this.indexers.set(name, fn);
    const index = new Map<string, Set<string>>();
    this.indices.set(name, index);
    for (const [key, obj] of this.items) this.indexOne(index, fn, key, obj);
  }

  hasIndex(name: string): boolean {
    return this.indexers.has(name);
  }

  private indexOne(index: Map<string, Set<string>>, fn: IndexFunc<T>, key: string, obj: T) {
    for (const value of new Set(fn(obj))) {
      let keys = index.get(value);
      if (!keys) index.set(value, (keys = new Set()));
      keys.add(key);
    }
  }

  private unindexOne(index: Map<string, Set<string>>, fn: IndexFunc<T>, key: string, obj: T) {
    for (const value of new Set(fn(obj))) {
      const keys = index.get(value);
      keys?.delete(key);
      if (keys && !keys.size) index.delete(value);
    }
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  /**
   * The objects that may match `q`: exactly those in its namespace, index value and label values
   * when it names them, read from the smallest index that applies. Other selector terms (`!=`,
   * `notin`, existence) are the caller's to apply to what this returns.
   */
  select(q: StoreQuery): T[] {
    const postings: Set<string>[][] = [];
    if (q.index) postings.push([this.postingOf(q.index.name, q.index.value)]);
    if (q.namespace !== undefined) postings.push([this.byNamespace.get(q.namespace) ?? EMPTY]);
    for (const { key, values } of q.labels ?? []) {
      const index = this.labelIndex(key);
      postings.push(values.map((v) => index.get(v) ?? EMPTY));
    }
    if (!postings.length) return [...this.items.values()];
    const size = (sets: Set<string>[]) => sets.reduce((n, x) => n + x.size, 0);
    const smallest = postings.reduce((a, b) => (size(b) < size(a) ? b : a));
    const rest = postings.filter((p) => p !== smallest);
    const out: T[] = [];
    for (const set of smallest) {
      for (const key of set) {
        if (rest.every((sets) => sets.some((x) => x.has(key)))) out.push(this.items.get(key)!);
      }
    }
    return out;
  }

  private postingOf(name: string, value: string): Set<string> {
    const index = this.indices.get(name);
    if (!index) throw new Error(`no index named "${name}": register it with indexField() before reading`);
    return index.get(value) ?? EMPTY;
  }

  private labelIndex(key: string): Map<string, Set<string>> {
    let index = this.byLabel.get(key);
    if (!index) {
      index = new Map();
      for (const [k, obj] of this.items) {
        const v = obj.metadata.labels?.[key];
        if (v !== undefined) add(index, v, k);
      }
      this.byLabel.set(key, index);
    }
    return index;
  }

  private track(key: string, old: T | undefined, obj: T | undefined) {
    const oldNs = old?.metadata.namespace ?? '';
    const newNs = obj?.metadata.namespace ?? '';
    if (old && (!obj || oldNs !== newNs)) drop(this.byNamespace, oldNs, key);
    if (obj && (!old || oldNs !== newNs)) add(this.byNamespace, newNs, key);
    for (const [label, index] of this.byLabel) {
      const before = old?.metadata.labels?.[label];
      const after = obj?.metadata.labels?.[label];
      if (before === after) continue;
      if (before !== undefined) drop(index, before, key);
      if (after !== undefined) add(index, after, key);
    }
  }

  list(): T[] {
    return [...this.items.values()];
  }

  /** Inserts or replaces one object; returns the delta (undefined when nothing changed). */
  upsert(obj: T): StoreDelta<T> | undefined {
    const key = keyOf(obj);
    const old = this.items.get(key);
    if (old && old.metadata.resourceVersion === obj.metadata.resourceVersion && old.metadata.uid === obj.metadata.uid) return undefined;
    deepFreeze(obj);
    for (const [name, fn] of this.indexers) {
      const index = this.indices.get(name)!;
      if (old) this.unindexOne(index, fn, key, old);
      this.indexOne(index, fn, key, obj);
    }
    this.track(key, old, obj);
    this.items.set(key, obj);
    return old ? { type: 'update', old, obj } : { type: 'add', obj };
  }

  remove(obj: T): StoreDelta<T> | undefined {
    const key = keyOf(obj);
    const old = this.items.get(key);
    if (!old) return undefined;
    for (const [name, fn] of this.indexers) this.unindexOne(this.indices.get(name)!, fn, key, old);
    this.track(key, old, undefined);
    this.items.delete(key);
    // Report the last state we knew; the delete event's object may be a tombstone-like partial.
    return { type: 'delete', obj: deepFreeze(obj.metadata.resourceVersion ? obj : old) };
  }

  /**
   * Replaces the whole content after a (re)list and returns what changed, including deletions that
   * happened while the watch was down (the objects missing from the new list).
   */
  replace(objs: T[]): StoreDelta<T>[] {
    return [...this.replaceInSlices(objs, Infinity)].flat();
  }

  /**
   * `replace`, a slice of `size` objects at a time: each step applies the next slice and yields
   * what it changed, then the deletions come last. The informer hands each slice on and lets the
   * event loop run between them, so a 50,000-object relist does not stop every other informer,
   * probe and reconcile for its whole length. Between steps the store holds some objects at their
   * new version and some at their old, as it does between two watch events.
   */
  *replaceInSlices(objs: T[], size: number): Generator<StoreDelta<T>[]> {
    const seen = new Set<string>();
    for (const slice of slices(objs, size)) {
      for (const obj of slice) seen.add(keyOf(obj));
      yield slice.map((obj) => this.upsert(obj)).filter((d) => d !== undefined);
    }
    const gone = [...this.items.values()].filter((old) => !seen.has(keyOf(old)));
    for (const slice of slices(gone, size)) yield slice.map((old) => this.remove(old)).filter((d) => d !== undefined);
  }
}

/** `xs` in consecutive pieces of `size` (one piece when it is Infinity). */
function* slices<X>(xs: X[], size: number): Generator<X[]> {
  for (let i = 0; i < xs.length; i += size) yield xs.slice(i, i + size);
}

const EMPTY: Set<string> = new Set();

function add(index: Map<string, Set<string>>, value: string, key: string) {
  let keys = index.get(value);
  if (!keys) index.set(value, (keys = new Set()));
  keys.add(key);
}

function drop(index: Map<string, Set<string>>, value: string, key: string) {
  const keys = index.get(value);
  keys?.delete(key);
  if (keys && !keys.size) index.delete(value);
}
