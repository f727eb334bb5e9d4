import { parseKey } from '../client/types.js';
import { shardHash } from './hash.js';
import { contains, EMPTY, type RangeSet, type ShardField } from './ranges.js';

/**
 * Which of a controller's keys this replica reconciles: those whose primary object hashes (by uid
 * or namespace, as the API server's shard selector would) into the ranges its ShardMember was
 * given. A key is placed by the uid seen when it was queued (a deleted object is gone from the
 * cache by the time it runs) or else by the cached object; a key that cannot be placed is not
 * this replica's to run.
 */
export class ShardFilter {
  private active: RangeSet = EMPTY;
  /** The uid each queued key was seen with, until it runs. */
  private readonly uids = new Map<string, string>();

  constructor(
    readonly field: ShardField,
    /** The primary object's uid for a key, from the cache. */
    private readonly cachedUid: (key: string) => string | undefined,
  ) {}

  get ranges(): RangeSet {
    return this.active;
  }

  set(ranges: RangeSet): void {
    this.active = ranges;
  }

  /** The point of the hash space a key sits at, if it can be told. */
  hashOf(key: string, uid?: string): bigint | undefined {
    if (this.field === 'object.metadata.namespace') return shardHash(parseKey(key).namespace ?? '');
    const u = uid ?? this.uids.get(key) ?? this.cachedUid(key);
    return u === undefined ? undefined : shardHash(u);
  }

  owns(key: string, uid?: string): boolean {
    const h = this.hashOf(key, uid);
    return h !== undefined && contains(this.active, h);
  }

  /** Remembers the uid a key was queued for (its object may be deleted before it runs). */
  note(key: string, uid: string | undefined): void {
    if (uid && this.field === 'object.metadata.uid') this.uids.set(key, uid);
  }

  /** The key ran (or was dropped): its uid is read afresh next time. */
  forget(key: string): void {
    this.uids.delete(key);
  }

  /** Whether a key sits in these ranges (to drain them). */
  within(key: string, ranges: RangeSet): boolean {
    const h = this.hashOf(key);
    return h !== undefined && contains(ranges, h);
  }
}
