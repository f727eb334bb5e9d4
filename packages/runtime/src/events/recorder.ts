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
}

interface Seen {
  namespace: string;
  name: string;
  count: number;
  last: number;
}

const nowRfc3339 = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

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
  private readonly window: number;

  constructor(private readonly client: Client, private readonly log: Logger, readonly options: EventRecorderOptions) {
    this.window = options.aggregateWindowMs ?? 10 * 60_000;
  }

  event(obj: KubeObject, type: EventType, reason: string, message: string): void {
    const p = this.record(obj, type, reason, message)
      .catch((err) => this.log.warn({ err: (err as Error).message, reason }, 'could not record event'))
      .finally(() => this.pending.delete(p));
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
    const now = Date.now();
    const b = this.buckets.get(objKey) ?? { tokens: burst, at: now };
    b.tokens = Math.min(burst, b.tokens + (now - b.at) / refill);
    b.at = now;
    this.buckets.set(objKey, b);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  private async record(obj: KubeObject, type: EventType, reason: string, message: string): Promise<void> {
    const m = obj.metadata;
    const objKey = `${obj.apiVersion}/${obj.kind}/${m.namespace ?? ''}/${m.name}/${m.uid ?? ''}`;
    const key = `${objKey}|${type}|${reason}|${message}`;
    const now = Date.now();
    const prev = this.seen.get(key);
    if (prev && now - prev.last < this.window) {
      prev.count++;
      prev.last = now;
      try {
        await this.client.patch(CoreEvent, { namespace: prev.namespace, name: prev.name }, { count: prev.count, lastTimestamp: nowRfc3339() });
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
    if (this.seen.size > 4096) for (const [k, v] of this.seen) if (now - v.last > this.window) this.seen.delete(k);
    const namespace = m.namespace || 'default';
    const name = `${m.name}.${now.toString(16)}${randomBytes(2).toString('hex')}`;
    const ts = nowRfc3339();
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
