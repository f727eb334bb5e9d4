import { rfc3339, Secret, type ReconcileContext, type Result } from '@opkit/runtime';
import type { CertificateObject } from '../../api/v1/certificate.js';
import { A } from '../../api/v1/shared.js';
import { issuanceBackoffMs } from '../../pki/renewal.js';
import { keepsReady } from './policies.js';
import { isOverwritten, type SecretState } from './secret-state.js';
import { conditionOf, notReady, writeStatus } from './status.js';

/** Nodes' timers and humans both prefer rechecks at least daily. */
export const MAX_REQUEUE_MS = 24 * 3_600_000;
/** A second overwrite of the Secret within this window counts as contention, not a reason to re-issue. */
export const CONTENTION_WINDOW_MS = 10 * 60_000;

type Why = { reason: string; message: string };

/**
 * Failed before with this spec: wait out the backoff (1 h doubling to 32 h), as cert-manager's
 * failedIssuanceAttempts. The state is in the status, so it survives restarts, and our own status
 * writes cannot shorten it. A spec change or a forced renewal starts afresh.
 */
export async function failureBackoff(c: CertificateObject, state: SecretState, why: Why, ctx: ReconcileContext, now: Date): Promise<Result | undefined> {
  const failures = c.status?.failedIssuanceAttempts ?? 0;
  const last = conditionOf(c.status?.conditions, 'Issuing');
  const betweenAttempts = last?.status === 'False' && last.observedGeneration === c.metadata.generation;
  if (!failures || !betweenAttempts || !c.status?.lastFailureTime) return undefined;
  const retryAt = Date.parse(c.status.lastFailureTime) + issuanceBackoffMs(failures);
  if (retryAt <= now.getTime()) return undefined;
  const contended = last.reason === 'SecretContention';
  const message = contended
    ? last.message
    : `${why.message}; the last attempt failed, retrying at ${new Date(retryAt).toISOString()} (attempt ${failures + 1})`;
  if (state.problem || !keepsReady(why.reason)) await notReady(c, ctx, contended ? 'SecretContention' : why.reason, message, false);
  return { requeueAfter: Math.min(MAX_REQUEUE_MS, retryAt - now.getTime()) };
}

/** The field managers that last wrote the Secret's data, to name them in messages. */
async function secretWriters(c: CertificateObject, ctx: ReconcileContext): Promise<string> {
  const s = await ctx.client.find(Secret, { namespace: c.metadata.namespace, name: c.spec.secretName });
  const other = s?.metadata.managedFields?.filter(
    (f) => f.manager !== ctx.client.options.fieldManager && JSON.stringify(f.fieldsV1 ?? {}).includes('"f:data"'),
  );
  return other?.length ? other.map((f) => f.manager).join(', ') : 'another writer';
}

/**
 * Someone keeps overwriting the Secret's key. The first time, re-issue (the caller goes on). If it
 * happens again right after that re-issuance, it is a fight with another writer: back off.
 */
export async function contention(c: CertificateObject, state: SecretState, why: Why, ctx: ReconcileContext, now: Date): Promise<Result | undefined> {
  if (!isOverwritten(state) || !c.status?.revision) return undefined;
  const marked = conditionOf(c.status.conditions, 'SecretOverwritten');
  const ready = conditionOf(c.status.conditions, 'Ready');
  const reissuedSinceMark = marked && ready?.status === 'True' && Date.parse(ready.lastTransitionTime) >= Date.parse(marked.lastTransitionTime);
  const writer = await secretWriters(c, ctx);
  if (marked && reissuedSinceMark && now.getTime() - Date.parse(marked.lastTransitionTime) < CONTENTION_WINDOW_MS) {
    const failures = (c.status.failedIssuanceAttempts ?? 0) + 1;
    const retryAt = new Date(now.getTime() + issuanceBackoffMs(failures));
    const message = `Secret "${c.spec.secretName}" keeps being overwritten (by ${writer}): not re-issuing into a fight; retrying at ${retryAt.toISOString()}. Stop the other writer, or force a renewal with the ${A.renew} annotation`;
    ctx.recorder.warning(c, 'SecretContention', message);
    await writeStatus(c, ctx, (s, set) => {
      s.failedIssuanceAttempts = failures;
      s.lastFailureTime = rfc3339(now);
      set({ type: 'Issuing', status: 'False', reason: 'SecretContention', message });
      set({ type: 'Ready', status: 'False', reason: 'SecretContention', message });
    });
    return { requeueAfter: issuanceBackoffMs(failures) };
  }
  ctx.recorder.warning(c, 'SecretOverwritten', `Secret "${c.spec.secretName}" was overwritten by ${writer}: ${why.message}`);
  return undefined;
}
