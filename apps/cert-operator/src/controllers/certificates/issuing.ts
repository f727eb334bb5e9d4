import type { CertApi } from '../../api/index.js';
import { Priority, rfc3339, type ReconcileContext, type Result } from '@opkit/runtime';
import type { CertificateObject } from '../../api/v1/certificate.js';
import type { CertificateRequestObject } from '../../api/v1/certificaterequest.js';
import type { CertOperatorConfig } from '../../config.js';
import { certificateMatchesKey, inspectCertificate } from '../../pki/inspect.js';
import { encodePrivateKey, keySpecOf } from '../../pki/keys.js';
import { unb64 } from '../certificaterequests/controller.js';
import { CONTENTION_WINDOW_MS, MAX_REQUEUE_MS } from './backoff.js';
import type { NextKey } from './next-key.js';
import { prune } from './requests.js';
import type { SecretReader } from '../../secrets/secret-reader.js';
import { applySecret } from './secret.js';
import type { SecretState } from './secret-state.js';
import { forgetRenewalInfo } from './renewal-info.js';
import { renewalPlan, type IssuerRenewal, type RenewalPlan } from './renewal-plan.js';
import { conditionOf, notReady, writeStatus, type CertificateStatus, type StatusEdit } from './status.js';

const READY = { type: 'Ready', status: 'True', reason: 'Ready', message: 'Certificate is up to date and has not expired' } as const;

/**
 * The next look at an issued certificate: when its renewal is due (one second past it), at most a
 * day ahead; while renewal is paused, when it would have renewed (readiness then says the expiry is
 * near), then at expiry. At high priority: a renewal has a deadline (the CA's window, the expiry)
 * and new work queued meanwhile has none, so at scale the renewal is not served after it
 * (bench/README.md, "Short lifetimes at 10,000").
 */
function untilRenewal(plan: RenewalPlan, notAfter: Date, now: number): Result {
  const would = plan.paused?.wouldRenewAt?.getTime();
  const next = plan.at?.getTime() ?? (would !== undefined && would > now ? would : notAfter.getTime());
  return { requeueAfter: Math.min(MAX_REQUEUE_MS, Math.max(1_000, next - now + 1_000)), priority: Priority.high };
}

/**
 * The status of the certificate the Secret holds: its validity, its renewal, no key of an issuance
 * under way, and no renewal info about another certificate (renewal-info.ts).
 */
function recordCertificate(s: CertificateStatus, cert: { notBefore: Date; notAfter: Date }, renewAt: Date | undefined, issued = false): void {
  forgetRenewalInfo(s, rfc3339(cert.notAfter), issued);
  s.notBefore = rfc3339(cert.notBefore);
  s.notAfter = rfc3339(cert.notAfter);
  if (renewAt) s.renewalTime = rfc3339(renewAt);
  else delete s.renewalTime;
  delete s.nextPrivateKeySecretName;
}

/**
 * What readiness says about a pause (`RenewalPaused`): that renewal is paused and by whom, and once
 * the certificate is past the time it would have renewed, that it will expire, with a Warning
 * event: pausing keeps the certificate from being replaced, not its expiry from being alerted.
 */
function pauseCondition(plan: RenewalPlan, notAfter: Date, now: Date, c: CertificateObject, ctx: ReconcileContext): StatusEdit {
  return (_s, set, unset) => {
    if (!plan.paused) return unset('RenewalPaused');
    const overdue = plan.paused.wouldRenewAt && plan.paused.wouldRenewAt.getTime() <= now.getTime();
    const message = overdue
      ? `Renewal is paused by ${plan.paused.by}: the certificate was due for renewal at ${plan.paused.wouldRenewAt!.toISOString()} and expires at ${notAfter.toISOString()}, when it is issued again`
      : `Renewal is paused by ${plan.paused.by}: the certificate is not renewed ahead of its expiry at ${notAfter.toISOString()}`;
    const reason = overdue ? 'ExpiringWhilePaused' : 'Paused';
    if (overdue && conditionOf(c.status?.conditions, 'RenewalPaused')?.reason !== reason) ctx.recorder.warning(c, reason, message);
    set({ type: 'RenewalPaused', status: 'True', reason, message });
  };
}

/**
 * Readiness, when nothing is to be issued: the Secret's metadata kept ours (cert-manager's
 * annotations and other tools' labels stay), Ready reported, the renewal scheduled.
 */
export async function upToDate(
  c: CertificateObject,
  state: SecretState,
  ctx: ReconcileContext,
  cfg: CertOperatorConfig,
  reader: SecretReader,
  now: Date,
  issuer: IssuerRenewal | undefined,
  ...also: StatusEdit[]
): Promise<Result> {
  const { api } = cfg;
  const wrote = await applySecret(c, { chainPem: state.certPem!, keyPem: state.keyPem!, caPem: state.caPem }, state, ctx, cfg, reader);
  if ('problem' in wrote) return outputProblem(api, c, ctx, wrote.problem);
  const cert = state.cert!;
  // The plan for the certificate as the status will record it: a window kept for another is not used.
  const plan = renewalPlan(c, cert, now, issuer);
  const renewAt = plan.at;
  await writeStatus(
    api,
    c,
    ctx,
    (s, set, unset) => {
      recordCertificate(s, cert, renewAt);
      set(READY);
      // A failed issuance stays said (Issuing=False, with the request's reason) until one succeeds,
      // as cert-manager keeps it: a denied or failed manual renewal of a certificate still valid
      // would otherwise vanish from the object. A fight over the Secret is over once it is ours.
      const issuing = conditionOf(s.conditions, 'Issuing');
      if (issuing && (issuing.status !== 'False' || issuing.reason === 'SecretContention')) unset('Issuing');
      const marked = conditionOf(s.conditions, 'SecretOverwritten');
      if (marked && now.getTime() - Date.parse(marked.lastTransitionTime) > CONTENTION_WINDOW_MS) unset('SecretOverwritten');
    },
    pauseCondition(plan, cert.notAfter, now, c, ctx),
    ...also,
  );
  await prune(api, c, ctx);
  return untilRenewal(plan, cert.notAfter, now.getTime());
}

/**
 * The Secret's outputs cannot be written (a keystore password is missing): said on the Certificate.
 * The password's Secret is watched (KEYSTORE_PASSWORD_INDEX): its arrival reconciles again.
 */
async function outputProblem(api: CertApi, c: CertificateObject, ctx: ReconcileContext, problem: { reason: string; message: string }): Promise<Result> {
  await notReady(api, c, ctx, problem.reason, problem.message);
}

/** Issuing: the signed certificate and its key into the Secret, the revision recorded. */
export async function completeIssuance(
  c: CertificateObject,
  cr: CertificateRequestObject,
  next: NextKey,
  revision: number,
  state: SecretState,
  ctx: ReconcileContext,
  cfg: CertOperatorConfig,
  reader: SecretReader,
  issuer: IssuerRenewal | undefined,
): Promise<Result> {
  const { api } = cfg;
  const chainPem = unb64(cr.status!.certificate!);
  if (!certificateMatchesKey(chainPem, next.key)) throw new Error(`CertificateRequest "${cr.metadata.name}" returned a certificate for another key`);
  const keyPem = encodePrivateKey(next.key, keySpecOf(c.spec.privateKey).encoding);
  const wrote = await applySecret(c, { chainPem, keyPem, caPem: cr.status?.ca ? unb64(cr.status.ca) : undefined }, state, ctx, cfg, reader);
  // The issued certificate stays in its CertificateRequest until the Secret can be written.
  if ('problem' in wrote) return outputProblem(api, c, ctx, wrote.problem);
  const info = inspectCertificate(chainPem);
  // A new certificate: no renewal info about it yet (the renewal-info controller asks the CA next).
  const plan = renewalPlan(c, info, new Date(ctx.clock.now()), issuer, true);
  const renewAt = plan.at;
  ctx.recorder.normal(c, 'Issued', `The certificate has been successfully issued (revision ${revision}, valid until ${info.notAfter.toISOString()})`);
  const issued = await writeStatus(
    api,
    c,
    ctx,
    (s, set, unset) => {
      s.revision = revision;
      recordCertificate(s, info, renewAt, true);
      delete s.failedIssuanceAttempts;
      delete s.lastFailureTime;
      set(READY);
      unset('Issuing');
      // The issuer just signed: whatever kept it from being ready is over (no extra write later).
      unset('IssuerReady');
    },
    pauseCondition(plan, info.notAfter, new Date(ctx.clock.now()), c, ctx),
  );
  // Pruned against the revision just written, in this reconcile: the cache has not seen it yet,
  // and a prune left to the next reconcile lands whenever the queue reaches this key.
  await prune(api, issued, ctx);
  return untilRenewal(plan, info.notAfter, ctx.clock.now());
}
