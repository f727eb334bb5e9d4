/**
 * A Map of at most `max` entries: a read or write makes an entry the most recent, and a write past
 * the bound forgets the least recently used. For per-object memory that must not grow with the
 * cluster (client-go bounds its event correlator the same way). Map keeps insertion order, so the
 * first key is always the least recently used.
 */
export class LruMap<K, V> {
  private readonly map = new Map<K, V>();

  constructor(readonly max: number) {
    if (!(max >= 1)) throw new Error(`LruMap: max must be at least 1, not ${max}`);
  }

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    const v = this.map.get(key);
    if (v === undefined) return undefined;
    this.map.delete(key);
    this.map.set(key, v);
    return v;
  }

  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as K);
  }

  delete(key: K): boolean {
    return this.map.delete(key);
  }

  /** Every entry, least recently used first, without touching any (deleting while iterating is safe, as a Map's). */
  entries(): IterableIterator<[K, V]> {
    return this.map.entries();
  }
}
