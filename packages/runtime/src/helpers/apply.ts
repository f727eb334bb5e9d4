import { createHash } from 'node:crypto';
import type { Client } from '../client/client.js';
import type { Kind } from '../client/kind.js';
import type { KubeObject } from '../client/types.js';
import { isSubset } from './equality.js';

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
): Promise<{ outcome: ApplyOutcome; obj: T }> {
  const hash = contentHash(desired);
  if (current && current.metadata.annotations?.[APPLIED_HASH_ANNOTATION] === hash && isSubset(desired, current)) {
    return { outcome: 'unchanged', obj: current };
  }
  const withHash = { ...desired, metadata: { ...desired.metadata, annotations: { ...desired.metadata.annotations, [APPLIED_HASH_ANNOTATION]: hash } } };
  const obj = await client.apply(kind, withHash, { force: true });
  return { outcome: current ? 'updated' : 'created', obj };
}
