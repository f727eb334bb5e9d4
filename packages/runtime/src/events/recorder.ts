import type { Logger } from 'pino';
import { randomBytes } from 'node:crypto';
import type { Client } from '../client/client.js';
import { isNotFound } from '../client/errors.js';
import { CoreEvent } from '../client/kind.js';
import type { KubeObject } from '../client/types.js';

export type EventType = 'Normal' | 'Warning';

export interface EventRecorderOptions {
  /** The reporting component (the operator's name). */
  component: string;
  /** The reporting instance (pod name). */
  instance?: string;
  /** Repeats within this window update one Event's count instead of creating another. Default 10 min. */
  aggregateWindowMs?: number;
  /** Per-object spam filter: burst and one token per `refillMs` (client-go: 25, 5 min). */
  burst?: number;
  refillMs?: number;
  /** The clock (tests). */
  now?: () => number;
}

interface Seen {
  namespace: string;
  name: string;
  count: number;
  last: number;
}

const rfc3339 = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const objectKey = (obj: KubeObject) => `${obj.apiVersion}/${obj.kind}/${obj.metadata.namespace ?? ''}/${obj.metadata.name}/${obj.metadata.uid ?? ''}`;
const eventKey = (obj: KubeObject, type: EventType, reason: string, message: string) => `${objectKey(obj)}|${type}|${reason}|${message}`;

/** How often the maps are swept for objects nothing remembers any more. */
const PRUNE_EVERY_MS = 60_000;

/**
 * Records core/v1 Events about objects, as client-go's recorder: an identical event (same object,
 * type, reason and message) within the window increments the existing Event's count instead of
 * creating a new one, and a per-object token bucket drops floods. Writes happen in the background;
 * a failed write is logged, never thrown into a reconcile.
 */
export class EventRecorder {
  private readonly seen = new Map<string, Seen>();
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly pending = new Set<Promise<void>>();
  private readonly chains = new Map<string, Promise<void>>();
  private readonly window: number;
  private readonly now: () => number;
  private prunedAt: number;

  constructor(
    private readonly client: Client,
    private readonly log: Logger,
    readonly options: EventRecorderOptions,
  ) {
    this.window = options.aggregateWindowMs ?? 10 * 60_000;
    this.now = options.now ?? Date.now;
    this.prunedAt = this.now();
  }

  /** Objects the recorder holds state for (aggregation or spam budget). */
  get tracked(): number {
    return this.buckets.size;
  }

  /**
   * Forgets what no longer matters: aggregations whose window closed, and spam budgets refilled to
   * the brim (a fresh bucket would be identical). Without this an operator that touched many
   * short-lived objects would keep every one of them for good.
   */
  private prune(now: number) {
    if (now - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = now;
    const burst = this.options.burst ?? 25;
    const refill = this.options.refillMs ?? 5 * 60_000;
    for (const [k, v] of this.seen) if (now - v.last >= this.window) this.seen.delete(k);
    for (const [k, b] of this.buckets) if (b.tokens + (now - b.at) / refill >= burst) this.buckets.delete(k);
  }

  event(obj: KubeObject, type: EventType, reason: string, message: string): void {
    // Identical events are recorded one after another: two at once would both find nothing to
    // aggregate into and create two Events.
    const key = eventKey(obj, type, reason, message);
    const before = this.chains.get(key) ?? Promise.resolve();
    const p: Promise<void> = before
      .then(() => this.record(key, obj, type, reason, message))
      .catch((err) => this.log.warn({ err: (err as Error).message, reason }, 'could not record event'))
      .finally(() => {
        this.pending.delete(p);
        if (this.chains.get(key) === p) this.chains.delete(key);
      });
    this.chains.set(key, p);
    this.pending.add(p);
  }

  normal(obj: KubeObject, reason: string, message: string): void {
    this.event(obj, 'Normal', reason, message);
  }

  warning(obj: KubeObject, reason: string, message: string): void {
    this.event(obj, 'Warning', reason, message);
  }

  /** Waits for events still being written (on shutdown). */
  async flush(): Promise<void> {
    await Promise.all([...this.pending]);
  }

  private allow(objKey: string): boolean {
    const burst = this.options.burst ?? 25;
    const refill = this.options.refillMs ?? 5 * 60_000;
    const now = this.now();
    const b = this.buckets.get(objKey) ?? { tokens: burst, at: now };
    b.tokens = Math.min(burst, b.tokens + (now - b.at) / refill);
    b.at = now;
    this.buckets.set(objKey, b);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  /** `key` is the event's aggregation key, computed once in event(). */
  private async record(key: string, obj: KubeObject, type: EventType, reason: string, message: string): Promise<void> {
    const m = obj.metadata;
    const objKey = objectKey(obj);
    const now = this.now();
    this.prune(now);
    const prev = this.seen.get(key);
    if (prev && now - prev.last < this.window) {
      prev.count++;
      prev.last = now;
      try {
        await this.client.patch(CoreEvent, { namespace: prev.namespace, name: prev.name }, { count: prev.count, lastTimestamp: rfc3339(now) });
        return;
      } catch (err) {
        if (!isNotFound(err)) throw err;
        // The Event expired (TTL) or was deleted: start a new one.
      }
    }
    if (!this.allow(objKey)) {
      this.log.debug({ reason, object: m.name }, 'event dropped by the spam filter');
      return;
    }
    const namespace = m.namespace || 'default';
    const name = `${m.name}.${now.toString(16)}${randomBytes(2).toString('hex')}`;
    const ts = rfc3339(now);
    await this.client.create(CoreEvent, {
      metadata: { name, namespace },
      involvedObject: { apiVersion: obj.apiVersion, kind: obj.kind, name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion },
      type,
      reason,
      message: message.length > 1024 ? `${message.slice(0, 1021)}...` : message,
      source: { component: this.options.component },
      reportingComponent: this.options.component,
      reportingInstance: this.options.instance ?? this.options.component,
      action: reason,
      firstTimestamp: ts,
      lastTimestamp: ts,
      count: 1,
    } as never);
    this.seen.set(key, { namespace, name, count: 1, last: now });
  }
}
