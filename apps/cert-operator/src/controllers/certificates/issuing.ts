import type { CertApi } from '../../api/index.js';
import { rfc3339, type ReconcileContext, type Result } from '@opkit/runtime';
import type { CertificateObject } from '../../api/v1/certificate.js';
import type { CertificateRequestObject } from '../../api/v1/certificaterequest.js';
import type { CertOperatorConfig } from '../../config.js';
import { certificateMatchesKey, inspectCertificate } from '../../pki/inspect.js';
import { encodePrivateKey, keySpecOf } from '../../pki/keys.js';
import { renewalTime } from '../../pki/renewal.js';
import { unb64 } from '../certificaterequests/controller.js';
import { CONTENTION_WINDOW_MS, MAX_REQUEUE_MS } from './backoff.js';
import type { NextKey } from './next-key.js';
import { prune } from './requests.js';
import type { SecretReader } from '../../secrets/secret-reader.js';
import { applySecret } from './secret.js';
import type { SecretState } from './secret-state.js';
import { conditionOf, notReady, writeStatus, type StatusEdit } from './status.js';

const READY = { type: 'Ready', status: 'True', reason: 'Ready', message: 'Certificate is up to date and has not expired' } as const;

/** The wait until the renewal is due (one second past it), at most a day. */
/** Until the renewal, or (renewal disabled) until expiry, when the Expired trigger issues again. */
const untilRenewal = (renewAt: Date | undefined, notAfter: Date, now: number) => Math.min(MAX_REQUEUE_MS, (renewAt ?? notAfter).getTime() - now + 1_000);

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
  ...also: StatusEdit[]
): Promise<Result> {
  const { api } = cfg;
  const wrote = await applySecret(c, { chainPem: state.certPem!, keyPem: state.keyPem!, caPem: state.caPem }, state, ctx, cfg, reader);
  if (wrote.problem) return outputProblem(api, c, ctx, wrote.problem);
  const cert = state.cert!;
  const renewAt = renewalTime(cert.notBefore, cert.notAfter, c.spec);
  await writeStatus(
    api,
    c,
    ctx,
    (s, set, unset) => {
      s.notBefore = rfc3339(cert.notBefore);
      s.notAfter = rfc3339(cert.notAfter);
      if (renewAt) s.renewalTime = rfc3339(renewAt);
      else delete s.renewalTime;
      delete s.nextPrivateKeySecretName;
      set(READY);
      // A failed issuance stays said (Issuing=False, with the request's reason) until one succeeds,
      // as cert-manager keeps it: a denied or failed manual renewal of a certificate still valid
      // would otherwise vanish from the object. A fight over the Secret is over once it is ours.
      const issuing = conditionOf(s.conditions, 'Issuing');
      if (issuing && (issuing.status !== 'False' || issuing.reason === 'SecretContention')) unset('Issuing');
      const marked = conditionOf(s.conditions, 'SecretOverwritten');
      if (marked && now.getTime() - Date.parse(marked.lastTransitionTime) > CONTENTION_WINDOW_MS) unset('SecretOverwritten');
    },
    ...also,
  );
  await prune(api, c, ctx);
  return { requeueAfter: untilRenewal(renewAt, cert.notAfter, now.getTime()) };
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
): Promise<Result> {
  const { api } = cfg;
  const chainPem = unb64(cr.status!.certificate!);
  if (!certificateMatchesKey(chainPem, next.key)) throw new Error(`CertificateRequest "${cr.metadata.name}" returned a certificate for another key`);
  const keyPem = encodePrivateKey(next.key, keySpecOf(c.spec.privateKey).encoding);
  const wrote = await applySecret(c, { chainPem, keyPem, caPem: cr.status?.ca ? unb64(cr.status.ca) : undefined }, state, ctx, cfg, reader);
  // The issued certificate stays in its CertificateRequest until the Secret can be written.
  if (wrote.problem) return outputProblem(api, c, ctx, wrote.problem);
  const info = inspectCertificate(chainPem);
  const renewAt = renewalTime(info.notBefore, info.notAfter, c.spec);
  ctx.recorder.normal(c, 'Issued', `The certificate has been successfully issued (revision ${revision}, valid until ${info.notAfter.toISOString()})`);
  const issued = await writeStatus(api, c, ctx, (s, set, unset) => {
    s.revision = revision;
    s.notBefore = rfc3339(info.notBefore);
    s.notAfter = rfc3339(info.notAfter);
    if (renewAt) s.renewalTime = rfc3339(renewAt);
    else delete s.renewalTime;
    delete s.nextPrivateKeySecretName;
    delete s.failedIssuanceAttempts;
    delete s.lastFailureTime;
    set(READY);
    unset('Issuing');
    // The issuer just signed: whatever kept it from being ready is over (no extra write later).
    unset('IssuerReady');
  });
  // Pruned against the revision just written, in this reconcile: the cache has not seen it yet,
  // and a prune left to the next reconcile lands whenever the queue reaches this key.
  await prune(api, issued, ctx);
  return { requeueAfter: untilRenewal(renewAt, info.notAfter, ctx.clock.now()) };
}
