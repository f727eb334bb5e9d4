/**
 * Why a reconcile ran. controller-runtime and kube-rs merge every event for a key into one
 * reconcile and forget the events; here each one is kept (up to a bound) until the reconcile that
 * consumes it, handed to the reconciler as `ctx.triggers`, logged, counted, and shown by
 * /debug/queue beside the key's last reconciles.
 */
export type Trigger =
  /**
   * A watched object changed: which kind and object, and how. `list`: it was in the informer's
   * initial list (a start or a leadership gain), not a change just observed.
   */
  | { source: 'watch'; kind: string; namespace?: string; name: string; event: 'add' | 'update' | 'delete' | 'list'; at: number }
  /** The periodic resync (ControllerOptions.resyncPeriodMs). */
  | { source: 'resync'; at: number }
  /** The reconciler asked for it (`requeueAfter` or `requeue`). */
  | { source: 'requeue'; after?: number; at: number }
  /** The last attempt failed; this is its retry. */
  | { source: 'retry'; attempt: number; error: string; at: number }
  /** Added by code (`controller.enqueue`). */
  | { source: 'enqueue'; at: number }
  /** Its part of the hash space became this replica's (sharding): every object in it is reconciled once. */
  | { source: 'shard'; at: number };

/** A short name for metrics and logs: `watch:Deployment/update`, `requeue`, `retry`. */
export const triggerLabel = (t: Trigger): string => (t.source === 'watch' ? `watch:${t.kind}` : t.source);

export interface ReconcileRecord {
  key: string;
  reconcileId: string;
  startedAt: number;
  durationMs: number;
  result: string;
  error?: string;
  triggers: Trigger[];
  /** Triggers beyond the bound that were merged without being kept. */
  dropped: number;
}

/** Triggers kept per key: a burst of 1,000 pod updates is summarised, not stored. */
const MAX_TRIGGERS_PER_KEY = 16;
/** Keys whose last reconcile is remembered (least recently reconciled first out). */
const MAX_RECORDS = 2_000;

export class Provenance {
  private readonly pending = new Map<string, { triggers: Trigger[]; dropped: number }>();
  private readonly records = new Map<string, ReconcileRecord>();

  constructor(private readonly maxRecords = MAX_RECORDS) {}

  /** Remembers why `key` was added to the queue. */
  add(key: string, trigger: Trigger): void {
    let p = this.pending.get(key);
    if (!p) this.pending.set(key, (p = { triggers: [], dropped: 0 }));
    // Repeats of the same event on the same object collapse into the newest.
    const same = p.triggers.findIndex(
      (t) =>
        t.source === 'watch' &&
        trigger.source === 'watch' &&
        t.kind === trigger.kind &&
        t.name === trigger.name &&
        t.namespace === trigger.namespace &&
        t.event === trigger.event,
    );
    if (same >= 0) p.triggers.splice(same, 1);
    else if (p.triggers.length >= MAX_TRIGGERS_PER_KEY) {
      p.triggers.shift();
      p.dropped++;
    }
    p.triggers.push(trigger);
  }

  /** What a reconcile starting now consumes; triggers added from here on belong to the next one. */
  take(key: string): { triggers: Trigger[]; dropped: number } {
    const p = this.pending.get(key);
    this.pending.delete(key);
    return p ?? { triggers: [], dropped: 0 };
  }

  /** Triggers waiting for the key's next reconcile. */
  waiting(key: string): Trigger[] {
    return this.pending.get(key)?.triggers ?? [];
  }

  record(r: ReconcileRecord): void {
    this.records.delete(r.key);
    this.records.set(r.key, r);
    if (this.records.size > this.maxRecords) this.records.delete(this.records.keys().next().value!);
  }

  last(key: string): ReconcileRecord | undefined {
    return this.records.get(key);
  }

  /** The most recent reconciles, newest first. */
  recent(n: number): ReconcileRecord[] {
    return [...this.records.values()].slice(-n).reverse();
  }

  /** A new leadership term starts from nothing (its queue does). */
  clearPending(): void {
    this.pending.clear();
  }
}
