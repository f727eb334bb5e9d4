import type { CertApi } from '../../api/index.js';
import { removeCondition, type Condition, type ReconcileContext } from '@opkit/runtime';
import type { CertificateObject } from '../../api/v1/certificate.js';

export type CertificateStatus = NonNullable<CertificateObject['status']>;
export type Cond = Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>;
/** Edits a copy of the status: set or remove conditions, change fields. */
export type StatusEdit = (s: CertificateStatus, set: (x: Cond) => void, unset: (type: string) => void) => void;

export const conditionOf = (list: readonly { type: string }[] | undefined, type: string) => list?.find((c) => c.type === type) as Condition | undefined;

/**
 * Writes the status `edit` makes of the current one (the runtime skips the write if nothing
 * changed) and returns the Certificate as written: the cache sees the write only later.
 */
export async function writeStatus(api: CertApi, c: CertificateObject, ctx: ReconcileContext, ...edits: StatusEdit[]): Promise<CertificateObject> {
  const status: CertificateStatus = structuredClone(c.status ?? {});
  let conditions = (status.conditions as Condition[] | undefined) ?? [];
  const set = (x: Cond): void => {
    conditions = ctx.setCondition(conditions, { ...x, observedGeneration: c.metadata.generation });
  };
  const unset = (t: string): void => {
    conditions = removeCondition(conditions, t);
  };
  for (const edit of edits) edit(status, set, unset);
  status.conditions = conditions;
  if (!status.conditions.length) delete status.conditions;
  return (await ctx.updateStatus(api.Certificate.kind, c, status)).obj;
}

/** Records a Ready=False verdict, with a Warning event when it is news. */
export async function notReady(
  api: CertApi,
  c: CertificateObject,
  ctx: ReconcileContext,
  reason: string,
  message: string,
  event = true,
  ...also: StatusEdit[]
): Promise<void> {
  const prev = conditionOf(c.status?.conditions, 'Ready');
  if (event && (prev?.reason !== reason || prev.message !== message)) ctx.recorder.warning(c, reason, message);
  await writeStatus(api, c, ctx, (_s, set) => set({ type: 'Ready', status: 'False', reason, message }), ...also);
}
