import type { Logger } from 'pino';
import type { Cache } from '../cache/cache.js';
import type { Clock } from '../clock/clock.js';
import type { Client } from '../client/client.js';
import { ApiError } from '../client/errors.js';
import { keyOf, type KubeObject } from '../client/types.js';
import type { EventRecorder } from '../events/recorder.js';
import { setCondition, type Condition } from '../helpers/conditions.js';
import { deepEqual } from '../helpers/equality.js';
import { ReconcileTimeoutError } from './attempt.js';
import { statusUpdate } from './reconcile-context.js';
import type { Request } from './result.js';
import type { WatchSpec } from './watch-spec.js';

/** A failure as the object shows it: the API's reason (`Forbidden`, `Timeout`) and words. */
export interface Failure {
  reason: string;
  message: string;
}

/**
 * The whole status to show while reconciles fail, for a controller whose status has more than one
 * field that must agree (a phase beside conditions). Pure: the same inputs give the same status.
 */
export type ErrorStatus = (obj: KubeObject, failure: Failure, now: Date) => unknown;

export const failureOf = (err: Error): Failure => ({
  reason: err instanceof ApiError ? err.reason : err instanceof ReconcileTimeoutError ? 'Timeout' : 'ReconcileError',
  message: err instanceof ApiError ? err.serverMessage : err.message,
});

/**
 * Puts a persistent failure where the user looks: a Warning Event on the primary object (repeats
 * aggregate into one Event with a count) and, when the controller asks, its status (the error
 * condition, or the whole status from `errorStatus`).
 *
 * The status write changes the object, and its watch event would queue the key at once, past its
 * backoff: with a message that varies (a request id, a port) a failing object then looped at API
 * latency. So each status this writes is remembered until its event comes back, and that event
 * triggers nothing (`isOwnWrite`). Recognised by content, not by resourceVersion: the event may
 * arrive before the write's response does.
 */
export class FailureReports {
  private readonly sent = new Map<string, unknown>();

  constructor(
    private readonly deps: { cache: Cache; client: Client; recorder: EventRecorder; log: Logger; clock: Clock },
    private readonly primary: WatchSpec,
    private readonly options: { errorCondition?: string; errorStatus?: ErrorStatus },
  ) {}

  report(req: Request, err: Error, signal: AbortSignal): void {
    const obj = this.deps.cache.informer(this.primary.kind, this.primary.informer).get(req);
    if (!obj || obj.metadata.deletionTimestamp) return;
    const failure = failureOf(err);
    this.deps.recorder.warning(obj, 'ReconcileError', failure.message);
    const status = this.statusFor(obj, failure);
    const current = (obj as { status?: unknown }).status;
    if (status === undefined || deepEqual(status, current)) return;
    const key = keyOf(obj);
    this.sent.set(key, status);
    // Guarded by resourceVersion: a newer status (the reconciler's own) wins over this report.
    this.deps.client
      .withSignal(signal)
      .updateStatus(this.primary.kind, statusUpdate(obj, status))
      .catch((e: Error) => {
        this.sent.delete(key);
        this.deps.log.warn({ err: e.message, name: req.name, namespace: req.namespace }, 'could not write the failure to the status');
      });
  }

  private statusFor(obj: KubeObject, failure: Failure): unknown {
    const now = new Date(this.deps.clock.now());
    if (this.options.errorStatus) return this.options.errorStatus(obj, failure, now);
    if (!this.options.errorCondition) return undefined;
    const status = ((obj as { status?: { conditions?: Condition[] } }).status ?? {}) as { conditions?: Condition[] };
    return {
      ...status,
      conditions: setCondition(
        status.conditions,
        { type: this.options.errorCondition, status: 'False', ...failure, observedGeneration: obj.metadata.generation },
        now,
      ),
    };
  }

  /** Whether an update of the primary object is this reporter's own status write coming back (then it triggers nothing). */
  isOwnWrite(old: KubeObject, obj: KubeObject): boolean {
    if (!this.sent.size) return false;
    const key = keyOf(obj);
    const sent = this.sent.get(key);
    if (sent === undefined) return false;
    const rest = (o: KubeObject) => ({ ...o, status: undefined, metadata: { ...o.metadata, resourceVersion: undefined } });
    if (!deepEqual((obj as { status?: unknown }).status, sent) || !deepEqual(rest(old), rest(obj))) return false;
    this.sent.delete(key);
    return true;
  }

  /** The key reconciled: whatever was last reported is no longer waited for. */
  forget(key: string): void {
    this.sent.delete(key);
  }
}
