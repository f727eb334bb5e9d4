import type { Logger } from 'pino';
import type { Cache, KindInformer } from '../cache/cache.js';
import type { Clock, Timer } from '../clock/clock.js';
import type { Kind } from '../client/kind.js';
import { keyOf, type KubeObject, type ObjectKey } from '../client/types.js';
import type { WorkQueue } from '../queue/work-queue.js';

/*
 * Read your writes, without blocking a worker. The invariant (docs/runtime.md, "Read-your-writes"):
 * a key's next reconcile starts only once every informer that can see what its last reconcile
 * wrote shows that write (or a later version), or has moved past it, or 10 s have passed. The
 * reconcile context records each write's result (RecordedWrite); the controller holds the key in
 * its queue (CacheHolds) until the informers catch up (caughtUp), woken by their events. No worker
 * waits, and no store is scanned. Tests: read-your-writes.test.ts (the decisions),
 * controller/read-your-writes.int.test.ts (against an API server).
 */

/** One write of this reconcile, and what the cache must show before the key's next reconcile. */
export interface RecordedWrite {
  kind: Kind;
  key: ObjectKey;
  /** The written object's labels (which informers can see it). */
  labels?: Record<string, string>;
  expectation: Expectation;
}

/**
 * Orders two resourceVersions. They are etcd revisions written as decimal integers, and since
 * Kubernetes 1.35 the API promises they compare that way; anything else is opaque and only equality
 * is known (`undefined`: cannot tell).
 */
export function compareResourceVersions(a: string | undefined, b: string | undefined): number | undefined {
  if (a === undefined || b === undefined) return undefined;
  if (a === b) return 0;
  if (!/^[1-9]\d*$/.test(a) || !/^[1-9]\d*$/.test(b)) return undefined;
  return a.length !== b.length ? Math.sign(a.length - b.length) : a < b ? -1 : 1;
}

/** What a write leaves the cache to catch up with. */
export type Expectation =
  /** The object as the write returned it: the cache must hold that version or a later one. */
  | { kind: 'written'; resourceVersion: string }
  /** A delete: the cache must show the object gone or marked for deletion. */
  | { kind: 'deleted' };

/**
 * Has a cache caught up with a write? `cached` is what it holds under the object's key;
 * `informerVersion` is the latest resourceVersion its watch delivered (events and bookmarks), which
 * covers what the cache will never hold: an object outside its selector, or deleted since.
 */
export function caughtUp(expected: Expectation, cached: KubeObject | undefined, informerVersion: string): boolean {
  const past = (rv: string | undefined) => (compareResourceVersions(informerVersion, rv) ?? -1) >= 0;
  if (expected.kind === 'deleted') return !cached || !!cached.metadata.deletionTimestamp;
  if (cached && (compareResourceVersions(cached.metadata.resourceVersion, expected.resourceVersion) ?? -1) >= 0) return true;
  return past(expected.resourceVersion);
}

/** Which of a kind's informers would show this object (selectors allowing). */
export function informersSeeing(cache: Cache, w: RecordedWrite): KindInformer<KubeObject>[] {
  return cache.informersOf(w.kind).filter((ki) => !ki.options.fieldSelector && ki.selects(w.labels));
}

export const writeKey = (w: RecordedWrite): string => keyOf(w.key);

/**
 * How long a key is held for the cache to show its last reconcile's writes. Past it the key runs
 * anyway (a watch that lags this much is reported by /readyz, and the reconcile is level-based).
 */
const HOLD_LIMIT_MS = 10_000;

/** A key held until the cache shows what its last reconcile wrote. */
interface Hold {
  pending: { write: RecordedWrite; informer: KindInformer<KubeObject> }[];
  timer: Timer;
}

/**
 * Holds a key while a cache its controller reads has not shown what its reconcile wrote: the
 * watch event of the write itself re-adds the key, and running it before the cache caught up
 * would read stale state and repeat the write. No worker waits: the key is parked in the queue
 * and released by the informer event that catches the cache up (or after HOLD_LIMIT_MS). One per
 * leadership term.
 */
export class CacheHolds {
  private readonly holds = new Map<string, Hold>();
  /** Informers listened to for held keys (subscribed on first need, without replay). */
  private readonly listening = new Set<KindInformer<KubeObject>>();

  constructor(
    private readonly queue: WorkQueue,
    private readonly cache: Cache,
    private readonly log: Logger,
    private readonly onSubscribe: (unsubscribe: () => void) => void,
    private readonly clock: Clock,
  ) {}

  hold(key: string, writes: RecordedWrite[]): void {
    const pending: Hold['pending'] = [];
    for (const write of writes) {
      for (const informer of informersSeeing(this.cache, write)) {
        if (!caughtUp(write.expectation, informer.get(write.key), informer.versionFor(write.key.namespace))) pending.push({ write, informer });
      }
    }
    if (!pending.length) return;
    for (const { informer } of pending) {
      if (this.listening.has(informer)) continue;
      this.listening.add(informer);
      const recheck = () => this.recheck(informer);
      this.onSubscribe(informer.addHandler({ onAdd: recheck, onUpdate: recheck, onDelete: recheck }, { replay: false }));
    }
    const previous = this.holds.get(key);
    previous?.timer.cancel();
    const timer = this.clock.setTimer(HOLD_LIMIT_MS, () => {
      this.holds.delete(key);
      this.log.debug(
        { key, waitingFor: pending.map((p) => writeKey(p.write)) },
        "the cache did not show this reconcile's writes in time; running the key anyway",
      );
      this.queue.release(key);
    });
    this.holds.set(key, { pending, timer });
    this.queue.hold(key);
  }

  private recheck(informer: KindInformer<KubeObject>) {
    for (const [key, hold] of this.holds) {
      if (!hold.pending.some((p) => p.informer === informer)) continue;
      hold.pending = hold.pending.filter((p) => !caughtUp(p.write.expectation, p.informer.get(p.write.key), p.informer.versionFor(p.write.key.namespace)));
      if (hold.pending.length) continue;
      hold.timer.cancel();
      this.holds.delete(key);
      this.queue.release(key);
    }
  }

  /** The term ended: no timer outlives it. */
  end(): void {
    for (const hold of this.holds.values()) hold.timer.cancel();
    this.holds.clear();
  }
}
