import type { CertApi } from '../../api/index.js';
import { rfc3339, Secret, type ReconcileContext, type Result } from '@opkit/runtime';
import type { CertificateObject } from '../../api/v1/certificate.js';
import { issuanceBackoffMs } from '../../pki/renewal.js';
import { keepsReady } from './policies.js';
import { isBroken, pairWriters, type SecretState } from './secret-state.js';
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
export async function failureBackoff(
  api: CertApi,
  c: CertificateObject,
  state: SecretState,
  why: Why,
  ctx: ReconcileContext,
  now: Date,
): Promise<Result | undefined> {
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
  if (state.problem || !keepsReady(why.reason)) await notReady(api, c, ctx, contended ? 'SecretContention' : why.reason, message, false);
  return { requeueAfter: Math.min(MAX_REQUEUE_MS, retryAt - now.getTime()) };
}

/**
 * Who other than this operator wrote the Secret's certificate or key since it last did, or
 * undefined. Any such write counts, a valid pair included (External Secrets, reflector, a CSI
 * driver, cert-manager): the writer is named from the Secret's managedFields, read from the API
 * server (the cache strips them). Only read when a trigger fired and the pair is not the one the
 * current request issued.
 */
async function overwrittenBy(
  api: CertApi,
  c: CertificateObject,
  state: SecretState,
  issuedChain: string | undefined,
  ctx: ReconcileContext,
): Promise<string | undefined> {
  if (!state.secret || !c.status?.revision) return undefined;
  const broken = isBroken(state);
  if (!broken && issuedChain !== undefined && state.certPem === issuedChain) return undefined;
  const s = await ctx.client.find(Secret, { namespace: c.metadata.namespace, name: c.spec.secretName });
  const writers = pairWriters(s?.metadata.managedFields, ctx.client.options.fieldManager);
  if (writers.length) return writers.join(', ');
  return broken ? 'another writer' : undefined;
}

/** What contention decided: wait (a fight), or go on and re-issue over the writer named. */
export type Contention = { wait: Result } | { overwrittenBy: string } | undefined;

/**
 * Someone else wrote the Secret's pair. The first time, re-issue (the caller goes on, marking
 * SecretOverwritten). If it happens again within the window after that re-issuance, it is a fight
 * with another writer: back off (1 h doubling, as failed issuances), so re-issues stay bounded.
 */
export async function contention(
  api: CertApi,
  c: CertificateObject,
  state: SecretState,
  issuedChain: string | undefined,
  why: Why,
  ctx: ReconcileContext,
  now: Date,
): Promise<Contention> {
  const writer = await overwrittenBy(api, c, state, issuedChain, ctx);
  if (!writer || !c.status?.revision) return undefined;
  const marked = conditionOf(c.status.conditions, 'SecretOverwritten');
  const ready = conditionOf(c.status.conditions, 'Ready');
  const reissuedSinceMark = marked && ready?.status === 'True' && Date.parse(ready.lastTransitionTime) >= Date.parse(marked.lastTransitionTime);
  if (marked && reissuedSinceMark && now.getTime() - Date.parse(marked.lastTransitionTime) < CONTENTION_WINDOW_MS) {
    const failures = (c.status.failedIssuanceAttempts ?? 0) + 1;
    const retryAt = new Date(now.getTime() + issuanceBackoffMs(failures));
    const message = `Secret "${c.spec.secretName}" keeps being overwritten (by ${writer}): not re-issuing into a fight; retrying at ${retryAt.toISOString()}. Stop the other writer, or force a renewal with the ${api.A.renew} annotation`;
    ctx.recorder.warning(c, 'SecretContention', message);
    await writeStatus(api, c, ctx, (s, set) => {
      s.failedIssuanceAttempts = failures;
      s.lastFailureTime = rfc3339(now);
      set({ type: 'Issuing', status: 'False', reason: 'SecretContention', message });
      set({ type: 'Ready', status: 'False', reason: 'SecretContention', message });
    });
    return { wait: { requeueAfter: issuanceBackoffMs(failures) } };
  }
  ctx.recorder.warning(c, 'SecretOverwritten', `Secret "${c.spec.secretName}" was overwritten by ${writer}: ${why.message}`);
  return { overwrittenBy: writer };
}
