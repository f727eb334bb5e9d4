import type { KubeObject } from '../client/types.js';

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
