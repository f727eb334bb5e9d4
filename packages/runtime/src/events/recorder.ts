import type { Logger } from 'pino';
import { randomBytes } from 'node:crypto';
import type { Client } from '../client/client.js';
import { isNotFound } from '../client/errors.js';
import { CoreEvent, defineKind } from '../client/kind.js';
import type { KubeObject } from '../client/types.js';
import { LruMap } from '../helpers/lru-map.js';
import { heartbeatDue, onOccurrence, type SeriesState } from './series.js';

/** events.k8s.io/v1 Events. */
export const EventsV1Event = defineKind<KubeObject & Record<string, unknown>>({
  group: 'events.k8s.io',
  version: 'v1',
  kind: 'Event',
  plural: 'events',
  namespaced: true,
});

/** MicroTime, as eventTime and series.lastObservedTime take it. */
const microTime = (ms: number) => new Date(ms).toISOString().replace(/Z$/, '000Z');

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
  /**
   * Which Events API: core/v1 (default; a repeat bumps `count`, written at once) or events.k8s.io/v1
   * (a repeat joins a `series`, whose count a heartbeat writes at most every `seriesHeartbeatMs`:
   * a flood costs one write per heartbeat). The second needs `create` and `patch` on
   * `events.events.k8s.io` in the operator's role.
   */
  api?: 'core/v1' | 'events.k8s.io/v1';
  /** events.k8s.io/v1: a series' count is written at most this often. Default 30 min, as client-go. */
  seriesHeartbeatMs?: number;
  /** events.k8s.io/v1: a repeat this long after the previous starts a new Event. Default 6 min, as client-go. */
  seriesFinishMs?: number;
  /**
   * Events and objects remembered for aggregation and the spam filter, each: past it the least
   * recently used is forgotten (a repeat of it is a new Event; its object a full budget). Default
   * 4,096, client-go's bound.
   */
  maxTracked?: number;
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
  private readonly seen: LruMap<string, Seen>;
  private readonly buckets: LruMap<string, { tokens: number; at: number }>;
  private readonly pending = new Set<Promise<void>>();
  private readonly chains = new Map<string, Promise<void>>();
  private readonly window: number;
  private readonly now: () => number;
  private prunedAt: number;
  private readonly series = new Map<string, SeriesState>();
  private heartbeat?: NodeJS.Timeout;

  constructor(
    private readonly client: Client,
    private readonly log: Logger,
    readonly options: EventRecorderOptions,
  ) {
    this.window = options.aggregateWindowMs ?? 10 * 60_000;
    const max = options.maxTracked ?? 4_096;
    this.seen = new LruMap(max);
    this.buckets = new LruMap(max);
    this.now = options.now ?? Date.now;
    this.prunedAt = this.now();
  }

  /** Objects the recorder holds state for (aggregation or spam budget). */
  get tracked(): number {
    return this.buckets.size;
  }

  /** Events remembered for aggregation (core/v1) or as series (events.k8s.io/v1). */
  get aggregations(): number {
    return this.options.api === 'events.k8s.io/v1' ? this.series.size : this.seen.size;
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
    for (const [k, v] of this.seen.entries()) if (now - v.last >= this.window) this.seen.delete(k);
    for (const [k, b] of this.buckets.entries()) if (b.tokens + (now - b.at) / refill >= burst) this.buckets.delete(k);
    // A series that ended with its count written: only a heartbeat (started by a repeat) swept them,
    // so Events that never repeat were remembered for good.
    const finishMs = this.options.seriesFinishMs ?? 6 * 60_000;
    for (const [k, v] of this.series) if (now - v.last >= finishMs && v.count === v.written) this.series.delete(k);
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

  /** Waits for events still being written, and writes series counts not written yet (on shutdown). */
  async flush(): Promise<void> {
    await Promise.all([...this.pending]);
    if (this.heartbeat) {
      clearInterval(this.heartbeat);
      this.heartbeat = undefined;
      await this.writeSeries(true);
    }
  }

  /** events.k8s.io/v1: writes the series whose count moved and whose heartbeat (or end) came; forgets ended ones. */
  private async writeSeries(all = false): Promise<void> {
    const heartbeatMs = this.options.seriesHeartbeatMs ?? 30 * 60_000;
    const finishMs = this.options.seriesFinishMs ?? 6 * 60_000;
    const now = this.now();
    for (const [key, s] of this.series) {
      if (s.count > s.written && (all || heartbeatDue(s, now, heartbeatMs, finishMs))) {
        const count = s.count;
        try {
          await this.client.patch(EventsV1Event, { namespace: s.namespace, name: s.name }, { series: { count, lastObservedTime: microTime(s.last) } });
          s.written = count;
          s.lastWrite = now;
        } catch (err) {
          this.log.warn({ err: (err as Error).message }, 'could not write an event series');
          s.written = count; // Not retried: the next repeat or heartbeat carries the count on.
        }
      }
      if (now - s.last >= finishMs) this.series.delete(key);
    }
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

  /** events.k8s.io/v1: an Event, a series begun, or a repeat counted for the heartbeat. */
  private async recordV1(key: string, obj: KubeObject, type: EventType, reason: string, message: string): Promise<void> {
    const m = obj.metadata;
    const now = this.now();
    this.prune(now);
    const finishMs = this.options.seriesFinishMs ?? 6 * 60_000;
    const prev = this.series.get(key);
    const step = onOccurrence(prev, now, finishMs);
    if (prev && step.write === 'series-now') {
      Object.assign(prev, { count: step.count, last: now });
      try {
        await this.client.patch(
          EventsV1Event,
          { namespace: prev.namespace, name: prev.name },
          { series: { count: step.count, lastObservedTime: microTime(now) } },
        );
        Object.assign(prev, { written: step.count, lastWrite: now });
        return;
      } catch (err) {
        if (!isNotFound(err)) throw err;
        // Gone (TTL, or deleted): a new Event below.
      }
    } else if (prev && step.write === 'later') {
      Object.assign(prev, { count: step.count, last: now });
      this.heartbeat ??= setInterval(() => void this.writeSeries(), Math.min(60_000, this.options.seriesHeartbeatMs ?? 60_000)).unref();
      return;
    }
    if (!this.allow(objectKey(obj))) {
      this.log.debug({ reason, object: m.name }, 'event dropped by the spam filter');
      return;
    }
    const namespace = m.namespace || 'default';
    const name = `${m.name}.${now.toString(16)}${randomBytes(2).toString('hex')}`;
    await this.client.create(EventsV1Event, {
      metadata: { name, namespace },
      eventTime: microTime(now),
      reportingController: this.options.component,
      reportingInstance: (this.options.instance ?? this.options.component).slice(0, 128),
      action: reason.slice(0, 128),
      reason: reason.slice(0, 128),
      type,
      note: message.length > 1024 ? `${message.slice(0, 1021)}...` : message,
      regarding: { apiVersion: obj.apiVersion, kind: obj.kind, name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion },
    });
    this.series.set(key, { name, namespace, count: 1, written: 1, last: now, lastWrite: now });
  }

  /** `key` is the event's aggregation key, computed once in event(). */
  private async record(key: string, obj: KubeObject, type: EventType, reason: string, message: string): Promise<void> {
    if (this.options.api === 'events.k8s.io/v1') return this.recordV1(key, obj, type, reason, message);
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
