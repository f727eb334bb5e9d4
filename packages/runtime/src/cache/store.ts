import { keyOf, type KubeObject } from '../client/types.js';
import { deepFreeze } from './freeze.js';

/** Extracts the values an object is indexed under (e.g. its owners' UIDs, its sources' names). */
export type IndexFunc<T> = (obj: T) => string[];

export type StoreDelta<T> =
  | { type: 'add'; obj: T }
  | { type: 'update'; old: T; obj: T }
  | { type: 'delete'; obj: T };

/**
 * The objects of one informer, frozen, keyed by namespace/name, with secondary indexes kept up to
 * date on every change.
 */
export class Store<T extends KubeObject> {
  private readonly items = new Map<string, T>();
  private readonly indexers = new Map<string, IndexFunc<T>>();
  private readonly indices = new Map<string, Map<string, Set<string>>>();

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

  list(): T[] {
    return [...this.items.values()];
  }

  byIndex(name: string, value: string): T[] {
    const index = this.indices.get(name);
    if (!index) throw new Error(`no index named "${name}": register it with indexField() before reading`);
    return [...(index.get(value) ?? [])].map((k) => this.items.get(k)!).filter(Boolean);
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
    this.items.set(key, obj);
    return old ? { type: 'update', old, obj } : { type: 'add', obj };
  }

  remove(obj: T): StoreDelta<T> | undefined {
    const key = keyOf(obj);
    const old = this.items.get(key);
    if (!old) return undefined;
    for (const [name, fn] of this.indexers) this.unindexOne(this.indices.get(name)!, fn, key, old);
    this.items.delete(key);
    // Report the last state we knew; the delete event's object may be a tombstone-like partial.
    return { type: 'delete', obj: deepFreeze(obj.metadata.resourceVersion ? obj : old) };
  }

  /**
   * Replaces the whole content after a (re)list and returns what changed, including deletions that
   * happened while the watch was down (the objects missing from the new list).
   */
  replace(objs: T[]): StoreDelta<T>[] {
    const deltas: StoreDelta<T>[] = [];
    const seen = new Set<string>();
    for (const obj of objs) {
      seen.add(keyOf(obj));
      const d = this.upsert(obj);
      if (d) deltas.push(d);
    }
    for (const [key, old] of [...this.items]) {
      if (seen.has(key)) continue;
      const d = this.remove(old);
      if (d) deltas.push(d);
    }
    return deltas;
  }
}
