import type { Logger } from 'pino';
import type { Cache } from '../cache/cache.js';
import type { Clock } from '../clock/clock.js';
import type { Client, DeleteOptions, PatchType } from '../client/client.js';
import { isNotFound } from '../client/errors.js';
import type { RecordedWrite } from './read-your-writes.js';
import type { Kind } from '../client/kind.js';
import type { Cached, KubeObject, ObjectKey } from '../client/types.js';
import type { EventRecorder } from '../events/recorder.js';
import { applyIfChanged, type ApplyOutcome } from '../helpers/apply.js';
import { setCondition, type Condition, type ConditionInput } from '../helpers/conditions.js';
import { deepEqual } from '../helpers/equality.js';
import { addFinalizer, hasFinalizer, removeFinalizer } from '../helpers/finalizers.js';
import type { Trigger } from './provenance.js';
import { ReferenceReader } from './reference-reader.js';

/** Reads that must bypass the cache (an object the operator does not watch). Writes go through the context. */
export type ReadClient = Pick<Client, 'get' | 'find' | 'list' | 'listAll' | 'options'>;

export interface FinalizeOptions {
  finalizer: string;
  /** Runs once the object is being deleted (or `done`), before the finalizer is removed, and not again. Throw to retry later. */
  cleanup(): Promise<void> | void;
  /** Whether the live object needs the finalizer at all (default true); without it nothing is added. */
  needed?: boolean;
  /** The object's work has ended before its deletion: clean up and drop the finalizer now. */
  done?: boolean;
}

/**
 * What a reconcile gets. Reads come from the cache; **every write goes through the context**, which
 * skips writes that would change nothing, fences them by `signal` (a reconcile past its timeout or
 * its leadership cannot write), and records what each write returned: the controller holds the
 * key's next reconcile until the cache has caught up, so a reconcile reads its own writes without
 * any worker waiting for them.
 */
export interface ReconcileContext {
  /** Carries controller, namespace, name and reconcileID on every line. */
  log: Logger;
  cache: Cache;
  /** For reads the cache cannot answer; fenced by `signal` like every request of the reconcile. */
  client: ReadClient;
  recorder: EventRecorder;
  reconcileId: string;
  /**
   * Why this reconcile runs: every event merged into its key since the last one (which watch, which
   * object, which event), a requeue the reconciler asked for, or the retry of a failure. For logs
   * and diagnosis; a reconcile still reads the current state and acts on all of it.
   */
  triggers: readonly Trigger[];
  /** Aborted when this reconcile must stop: timeout, lost leadership, shutdown. Pass it to long waits. */
  signal: AbortSignal;
  /** The time, injected: time-driven decisions read it here so tests can set it. */
  clock: Clock;

  /**
   * Server-side apply of the fields this operator owns, sent only when something would change: the
   * desired fields differ from what was last applied, or `current` (the cached object) has drifted.
   */
  apply<T extends KubeObject>(kind: Kind<T>, desired: T, current: T | undefined): Promise<{ outcome: ApplyOutcome; obj: Cached<T> }>;
  create<T extends KubeObject>(kind: Kind<T>, obj: T): Promise<Cached<T>>;
  /**
   * A call through the API server to a resource that answers instead of storing (an aggregated API
   * server's virtual resource, such as a cert-manager DNS webhook solver's ChallengePayload):
   * fenced like every write, and nothing to record for read-your-writes, since nothing is stored.
   */
  call<Req extends object, Res>(kind: Kind, body: Req): Promise<Res>;
  /** A patch (merge, JSON, strategic); `subresource: 'status'` for status. */
  patch<T extends KubeObject>(kind: Kind<T>, key: ObjectKey, patch: unknown, type?: PatchType, opts?: { subresource?: string }): Promise<Cached<T>>;
  /**
   * Writes `status` unless it equals the object's, guarded by the object's resourceVersion (a stale
   * read fails with a Conflict and the reconcile retries, instead of overwriting newer status).
   */
  updateStatus<T extends KubeObject & { status?: unknown }, O extends T>(kind: Kind<T>, obj: O, status: T['status']): Promise<{ changed: boolean; obj: O }>;
  /**
   * Deletes an object unless it is already on its way out (given the cached object), or by key
   * (with preconditions). Already gone counts as done. Returns whether this call deleted it.
   */
  delete<T extends KubeObject>(kind: Kind<T>, target: T | ObjectKey, opts?: Pick<DeleteOptions, 'preconditions' | 'propagationPolicy'>): Promise<boolean>;
  /**
   * The finalizer protocol in one call: while the object lives, makes sure it carries `finalizer`
   * (`active`, with the object as it now is); once it is being deleted, runs `cleanup` and removes
   * the finalizer (`finalized`: do nothing more with it).
   */
  finalize<T extends KubeObject, O extends T>(kind: Kind<T>, obj: O, opts: FinalizeOptions): Promise<{ state: 'active' | 'finalized'; obj: O }>;
  /**
   * An object the controller references (declared with `.references(kind, …)`), in full: from the
   * cache when it holds the current version, else fetched once per resourceVersion. Undefined when
   * it does not exist.
   */
  readReferenced<T extends KubeObject>(kind: Kind<T>, key: ObjectKey): Promise<T | undefined>;
  /** `setCondition` on the context's clock: the one way to build a condition list. */
  setCondition(list: readonly Condition[] | undefined, c: ConditionInput): Condition[];
}

export interface ContextDeps {
  log: Logger;
  cache: Cache;
  /** Already fenced by `signal`. */
  client: Client;
  recorder: EventRecorder;
  reconcileId: string;
  triggers?: readonly Trigger[];
  signal: AbortSignal;
  clock: Clock;
  /** The controller's reader of referenced objects (its memo outlives one reconcile). */
  references?: ReferenceReader;
  /** Told of each write: sent, recorded (its answer), ended (the controller's OwnWrites). */
  writeObserver?: WriteObserver;
}

/** Follows a reconcile's writes as they happen: one sent to an object, its answer, its end. */
export interface WriteObserver {
  writeStarted(kind: Kind, key: ObjectKey): void;
  record(w: RecordedWrite): void;
  writeEnded(kind: Kind, key: ObjectKey): void;
}

/**
 * The status write of `obj` with `status`, guarded by its resourceVersion (a newer object wins):
 * the one body both the context's updateStatus and the controller's error report send.
 */
export const statusUpdate = <T extends KubeObject>(obj: T, status: unknown): T =>
  ({
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    metadata: { name: obj.metadata.name, namespace: obj.metadata.namespace, resourceVersion: obj.metadata.resourceVersion },
    status,
  }) as unknown as T;

/** Builds a reconcile's context; `writes` collects what its writes returned. */
export function reconcileContext(deps: ContextDeps, writes: RecordedWrite[] = []): ReconcileContext {
  // The client is read from deps at each use: the controller makes its fenced client on first use.
  const keyOfObj = (o: KubeObject): ObjectKey => ({ namespace: o.metadata.namespace || undefined, name: o.metadata.name! });
  /** Records what a write returned; the object comes back shaped as the cache would hold it. */
  const wrote = <T extends KubeObject>(kind: Kind<T>, obj: T): Cached<T> => {
    obj.metadata.namespace ??= '';
    if (obj.metadata.resourceVersion) {
      const w: RecordedWrite = {
        kind,
        key: keyOfObj(obj),
        labels: obj.metadata.labels,
        expectation: { kind: 'written', resourceVersion: obj.metadata.resourceVersion },
      };
      writes.push(w);
      deps.writeObserver?.record(w);
    }
    return obj as Cached<T>;
  };
  const deleted = (kind: Kind, key: ObjectKey, labels?: Record<string, string>) => writes.push({ kind, key, labels, expectation: { kind: 'deleted' } });
  /** A write in flight: its watch event may come before its answer, and must wait for it to be told apart. */
  const sending = async <R>(kind: Kind, key: ObjectKey, work: () => Promise<R>): Promise<R> => {
    const observer = deps.writeObserver;
    if (!observer) return work();
    observer.writeStarted(kind, key);
    try {
      return await work();
    } finally {
      observer.writeEnded(kind, key);
    }
  };

  const ctx: ReconcileContext = {
    get log() {
      return deps.log;
    },
    cache: deps.cache,
    get client() {
      return deps.client;
    },
    recorder: deps.recorder,
    reconcileId: deps.reconcileId,
    triggers: deps.triggers ?? [],
    readReferenced: (kind, key) => (deps.references ?? new ReferenceReader(deps.cache)).read(deps.client, kind, key),
    get signal() {
      return deps.signal;
    },
    clock: deps.clock,

    async apply(kind, desired, current) {
      return sending(kind, keyOfObj(desired as KubeObject), async () => {
        const res = await applyIfChanged(deps.client, kind, desired, current);
        if (res.outcome === 'unchanged') return res as { outcome: ApplyOutcome; obj: Cached<typeof desired> };
        return { outcome: res.outcome, obj: wrote(kind, res.obj) };
      });
    },
    call: (kind, body) => deps.client.call(kind, body),
    async create(kind, obj) {
      return sending(kind, keyOfObj(obj), async () => wrote(kind, await deps.client.create(kind, obj)));
    },
    async patch(kind, key, patch, type = 'merge', opts = {}) {
      return sending(kind, key, async () => wrote(kind, await deps.client.patch(kind, key, patch, type, opts)));
    },
    async updateStatus(kind, obj, status) {
      if (deepEqual(obj.status, status)) return { changed: false, obj };
      return sending(kind, keyOfObj(obj), async () => ({
        changed: true,
        obj: wrote(kind, await deps.client.updateStatus(kind, statusUpdate(obj, status))) as typeof obj,
      }));
    },
    async delete(kind, target, opts = {}) {
      const isObject = 'metadata' in target;
      if (isObject && (target as KubeObject).metadata.deletionTimestamp) return false;
      const key = isObject ? keyOfObj(target as KubeObject) : (target as ObjectKey);
      const gone = await deps.client.deleteIfExists(kind, key, opts);
      deleted(kind, key, isObject ? (target as KubeObject).metadata.labels : undefined);
      return gone;
    },
    async finalize(kind, obj, opts) {
      const ours = hasFinalizer(obj, opts.finalizer);
      if (!obj.metadata.deletionTimestamp && !opts.done) {
        if (ours || opts.needed === false) return { state: 'active', obj };
        return sending(kind, keyOfObj(obj), async () => ({
          state: 'active' as const,
          obj: wrote(kind, await addFinalizer(deps.client, kind, obj, opts.finalizer)) as typeof obj,
        }));
      }
      // Clean up only while our finalizer still holds the object: once is enough, and cleanup that
      // reaches outside the cluster (a DNS record, a cloud API) must not be repeated by every later
      // reconcile of an object whose work is done. Without a finalizer (`needed: false`), a done
      // object's cleanup runs each time: it is then only idempotent work inside the cluster.
      if (!ours && (!opts.done || opts.needed !== false)) return { state: 'finalized', obj };
      await opts.cleanup();
      if (!ours) return { state: 'finalized', obj };
      const last = !!obj.metadata.deletionTimestamp && obj.metadata.finalizers!.length === 1;
      try {
        const updated = await removeFinalizer(deps.client, kind, obj, opts.finalizer);
        if (last) deleted(kind, keyOfObj(obj), obj.metadata.labels);
        else wrote(kind, updated);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      return { state: 'finalized', obj };
    },
    setCondition(list, c) {
      return setCondition(list, c, new Date(deps.clock.now()));
    },
  };
  return ctx;
}

export type { RecordedWrite } from './read-your-writes.js';
