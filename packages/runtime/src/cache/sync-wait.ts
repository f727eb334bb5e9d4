import { isForbidden, isNotFound, isUnauthorized } from '../client/errors.js';

/** An informer part not synced yet: what it is, and why its last attempt failed. */
export interface PendingPart {
  /** `secrets in ops`. */
  name: string;
  resource: string;
  lastError?: Error;
}

/** Since when (monotonic ms) the API server has refused access, or said it serves no such kind. */
export interface SyncWaitState {
  startedAt: number;
  deniedSince?: number;
  unservedSince?: number;
}

export type SyncVerdict = { wait: true; state: SyncWaitState } | { wait: false; error: string };

/**
 * Whether waiting for caches to sync should go on: a pure decision, table-tested. It gives up
 * after `timeoutMs`, or sooner once the API server has kept refusing a list for `graceMs`: access
 * denied (RBAC), or a kind it does not serve (a CRD not installed, a feature flag on without its
 * API). An operator that cannot work says why at once rather than hanging for minutes; the grace
 * covers a CRD created a moment ago and not yet established.
 */
export function judgeSyncWait(pending: PendingPart[], s: SyncWaitState, now: number, limits: { timeoutMs: number; graceMs: number }): SyncVerdict {
  const describe = (parts: PendingPart[]) => parts.map((p) => `${p.name}${p.lastError ? `: ${p.lastError.message}` : ''}`).join('\n  ');
  const denied = pending.filter((p) => isForbidden(p.lastError) || isUnauthorized(p.lastError));
  const unserved = pending.filter((p) => isNotFound(p.lastError));
  const state: SyncWaitState = {
    startedAt: s.startedAt,
    deniedSince: denied.length ? (s.deniedSince ?? now) : undefined,
    unservedSince: unserved.length ? (s.unservedSince ?? now) : undefined,
  };
  if (state.deniedSince !== undefined && now - state.deniedSince >= limits.graceMs) {
    return { wait: false, error: `the API server denies access needed to fill the cache (check the operator's RBAC):\n  ${describe(pending)}` };
  }
  if (state.unservedSince !== undefined && now - state.unservedSince >= limits.graceMs) {
    const names = [...new Set(unserved.map((p) => p.resource))];
    return {
      wait: false,
      error: `the API server does not serve ${names.join(', ')}: is its CustomResourceDefinition installed? (or turn off the option that needs it)\n  ${describe(unserved)}`,
    };
  }
  if (now - s.startedAt >= limits.timeoutMs)
    return { wait: false, error: `timed out after ${limits.timeoutMs / 1000}s waiting for caches to sync:\n  ${describe(pending)}` };
  return { wait: true, state };
}
