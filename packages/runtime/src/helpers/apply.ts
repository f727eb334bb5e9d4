import { createHash } from 'node:crypto';
import type { Cache } from '../cache/cache.js';
import type { Client } from '../client/client.js';
import type { Kind } from '../client/kind.js';
import type { KubeObject } from '../client/types.js';
import { deepEqual, isSubset } from './equality.js';

/** Annotation holding a hash of what the operator last applied to an object it owns. */
export const APPLIED_HASH_ANNOTATION = 'opkit.dev/applied-hash';

const stable = (v: unknown): string =>
  v === null || typeof v !== 'object'
    ? JSON.stringify(v)
    : Array.isArray(v)
      ? `[${v.map(stable).join(',')}]`
      : `{${Object.keys(v as object)
          .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
          .sort()
          .map((k) => `${JSON.stringify(k)}:${stable((v as Record<string, unknown>)[k])}`)
          .join(',')}}`;

export const contentHash = (v: unknown): string => createHash('sha256').update(stable(v)).digest('hex').slice(0, 16);

export type ApplyOutcome = 'created' | 'updated' | 'unchanged';

/**
 * Server-side applies `desired` (fields this operator owns) only when something would change:
 * - the hash of `desired` differs from the one recorded on the object (our intent changed, which
 *   also covers fields we stopped setting), or
 * - the object no longer holds what we set (someone edited it: drift is repaired).
 * Otherwise no request is sent, so a reconcile that finds nothing to do writes nothing.
 */
export async function applyIfChanged<T extends KubeObject>(
  client: Client,
  kind: Kind<T>,
  desired: T,
  current: T | undefined,
  opts: WriteThroughOptions = {},
): Promise<{ outcome: ApplyOutcome; obj: T }> {
  const hash = contentHash(desired);
  if (current && current.metadata.annotations?.[APPLIED_HASH_ANNOTATION] === hash && isSubset(desired, current)) {
    return { outcome: 'unchanged', obj: current };
  }
  const withHash = { ...desired, metadata: { ...desired.metadata, annotations: { ...desired.metadata.annotations, [APPLIED_HASH_ANNOTATION]: hash } } };
  const obj = await client.apply(kind, withHash, { force: true });
  await opts.cache?.observe(kind, { namespace: desired.metadata.namespace, name: desired.metadata.name! }, current?.metadata.resourceVersion);
  return { outcome: current ? 'updated' : 'created', obj };
}

export interface WriteThroughOptions {
  /**
   * Wait (up to 5 s) until this cache has seen the write, so the reconcile this write triggers
   * reads it and does not repeat it. Pass the reconcile context's cache.
   */
  cache?: Cache;
}

/**
 * Writes `status` through the status subresource unless it equals what the object already has.
 * The update carries the object's resourceVersion: a stale read fails with a Conflict (and the
 * reconcile retries with fresh state) instead of overwriting a newer status.
 */
export async function updateStatusIfChanged<T extends KubeObject & { status?: unknown }>(
  client: Client,
  kind: Kind<T>,
  obj: T,
  status: T['status'],
  opts: WriteThroughOptions = {},
): Promise<{ changed: boolean; obj: T }> {
  if (deepEqual(obj.status, status)) return { changed: false, obj };
  const next = { apiVersion: obj.apiVersion, kind: obj.kind, metadata: { name: obj.metadata.name, namespace: obj.metadata.namespace, resourceVersion: obj.metadata.resourceVersion }, status } as T;
  const updated = await client.updateStatus(kind, next);
  await opts.cache?.observe(kind, { namespace: obj.metadata.namespace, name: obj.metadata.name! }, obj.metadata.resourceVersion);
  return { changed: true, obj: updated };
}
