/** metav1.Condition, as CRD status conditions carry it. */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export type ConditionInput = Omit<Condition, 'lastTransitionTime'> & { lastTransitionTime?: string };

/** metav1.Time precision: whole seconds. */
export const rfc3339 = (d: Date = new Date()): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * Returns the list with `c` set. lastTransitionTime moves only when the status really changes, so
 * "Ready since" stays truthful and an unchanged reconcile produces an identical list (no write).
 */
export function setCondition(list: readonly Condition[] | undefined, c: ConditionInput, now: Date = new Date()): Condition[] {
  const out = [...(list ?? [])];
  const i = out.findIndex((x) => x.type === c.type);
  const prev = i >= 0 ? out[i] : undefined;
  const next: Condition = {
    type: c.type,
    status: c.status,
    reason: c.reason,
    message: c.message,
    lastTransitionTime: prev && prev.status === c.status ? prev.lastTransitionTime : (c.lastTransitionTime ?? rfc3339(now)),
    ...(c.observedGeneration !== undefined ? { observedGeneration: c.observedGeneration } : {}),
  };
  if (i >= 0) out[i] = next;
  else out.push(next);
  return out;
}

export const getCondition = (list: readonly Condition[] | undefined, type: string): Condition | undefined => list?.find((c) => c.type === type);

export const isConditionTrue = (list: readonly Condition[] | undefined, type: string): boolean => getCondition(list, type)?.status === 'True';

export const removeCondition = (list: readonly Condition[] | undefined, type: string): Condition[] => (list ?? []).filter((c) => c.type !== type);

/**
 * Progress that settles before it is written. A message-only change of a condition (same status,
 * reason and observedGeneration) within `quietMs` of the condition's last transition keeps the
 * message already there, and says when to look again (`recheckAfterMs`): short work (an ACME
 * renewal on a valid authorization takes under a second) writes its start and its end, not every
 * step between, and work that runs longer shows its progress, at most `quietMs` late. A change of
 * status or reason (a failure, the end) is never held. `nowMs` is wall-clock time, as
 * lastTransitionTime is (whole seconds: a condition reads up to a second older than it is).
 */
export function settleMessage<C extends ConditionInput>(
  prev: Pick<Condition, 'status' | 'reason' | 'message' | 'lastTransitionTime' | 'observedGeneration'> | undefined,
  next: C,
  nowMs: number,
  quietMs: number,
): { condition: C; recheckAfterMs?: number } {
  if (!prev || prev.status !== next.status || prev.reason !== next.reason || prev.message === next.message) return { condition: next };
  if (next.observedGeneration !== undefined && prev.observedGeneration !== next.observedGeneration) return { condition: next };
  const since = Date.parse(prev.lastTransitionTime);
  if (!Number.isFinite(since)) return { condition: next };
  const left = since + quietMs - nowMs;
  return left > 0 ? { condition: { ...next, message: prev.message }, recheckAfterMs: Math.ceil(left) } : { condition: next };
}
