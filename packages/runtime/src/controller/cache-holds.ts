import type { Logger } from 'pino';
import type { Cache, KindInformer } from '../cache/cache.js';
import { caughtUp } from '../cache/expectations.js';
import type { KubeObject } from '../client/types.js';
import type { WorkQueue } from '../queue/work-queue.js';
import type { Clock, Timer } from '../clock/clock.js';
import { informersSeeing, writeKey, type RecordedWrite } from './reconcile-context.js';

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

  constructor(private readonly queue: WorkQueue, private readonly cache: Cache, private readonly log: Logger, private readonly onSubscribe: (unsubscribe: () => void) => void, private readonly clock: Clock) {}

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
      this.log.debug({ key, waitingFor: pending.map((p) => writeKey(p.write)) }, 'the cache did not show this reconcile\'s writes in time; running the key anyway');
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
