import type { CertApi } from '../../api/index.js';
import {
  CONTROLLER_INDEX,
  controllerReference,
  goDuration,
  parseDuration,
  rfc3339,
  Secret,
  settleMessage,
  type ReconcileContext,
  type Result,
} from '@opkit/runtime';
import { overrideAnnotationsOf } from '../../acme/solver-overrides.js';
import { DEFAULT_DURATION, type CertificateObject } from '../../api/v1/certificate.js';
import type { CertificateRequestObject } from '../../api/v1/certificaterequest.js';
import type { KeyUsage } from '../../api/v1/shared.js';
import { createCSR, parseCSR, type ParsedCSR } from '../../pki/csr.js';
import { publicKeyDer } from '../../pki/keys.js';
import { issuanceBackoffMs } from '../../pki/renewal.js';
import { b64, unb64 } from '../certificaterequests/controller.js';
import { nextKeySecrets, type NextKey } from './next-key.js';
import { requestMismatches } from './policies.js';
import { conditionOf, writeStatus, type StatusEdit } from './status.js';
import { childName } from '../../names.js';
import { certificateNameLabel } from './name-label.js';
import { PROGRESS_QUIET_MS } from '../progress.js';

/** The request failed for good (its Ready condition says Failed or Denied). */
const requestFailed = (cr: CertificateRequestObject): boolean => {
  const ready = conditionOf(cr.status?.conditions, 'Ready');
  return ready?.status === 'False' && (ready.reason === 'Failed' || ready.reason === 'Denied');
};

/** The request has ended: signed (Ready), or failed for good. */
export const requestEnded = (cr: CertificateRequestObject): boolean => conditionOf(cr.status?.conditions, 'Ready')?.status === 'True' || requestFailed(cr);

/**
 * The request manager: the CertificateRequests of a Certificate, one per revision
 * (`<name>-<revision>`, shortened with a hash when too long: childName), created for the next key, replaced when outdated, pruned when done.
 */
export const revisionOf = (api: CertApi, cr: CertificateRequestObject) => Number(cr.metadata.annotations?.[api.A.revision] ?? 0);

/**
 * A Certificate's requests: those it controls, found by owner, not by our certificate-name label,
 * which cert-manager's requests do not carry (a request it made and opkit took over in flight).
 */
export async function requestsOf(api: CertApi, c: CertificateObject, ctx: ReconcileContext): Promise<CertificateRequestObject[]> {
  return ctx.cache.list(api.CertificateRequest.kind, { namespace: c.metadata.namespace, index: { name: CONTROLLER_INDEX, value: c.metadata.uid! } });
}

/** The request the current certificate was issued from, with its CSR parsed (what the trigger compares). */
export async function currentRequest(
  api: CertApi,
  c: CertificateObject,
  requests: CertificateRequestObject[],
): Promise<{ cr: CertificateRequestObject; csr: ParsedCSR } | undefined> {
  const cr = requests.find((r) => revisionOf(api, r) === c.status?.revision && conditionOf(r.status?.conditions, 'Ready')?.status === 'True');
  if (!cr) return undefined;
  try {
    return { cr, csr: await parseCSR(unb64(cr.spec.request)) };
  } catch {
    return undefined; // not ours to judge: the trigger falls back to the certificate
  }
}

/** Whether an in-flight request still asks for what the spec says, for the next key. */
export async function requestStillWanted(api: CertApi, cr: CertificateRequestObject, c: CertificateObject, key: NextKey): Promise<boolean> {
  try {
    const csr = await parseCSR(unb64(cr.spec.request));
    return publicKeyDer(csr.publicKey).equals(publicKeyDer(key.key)) && requestMismatches(api.groups, c.spec, cr, csr).length === 0;
  } catch {
    return false;
  }
}

export async function createRequest(api: CertApi, c: CertificateObject, ctx: ReconcileContext, name: string, revision: number, key: NextKey): Promise<void> {
  await ctx.create(api.CertificateRequest.kind, {
    metadata: {
      name,
      namespace: c.metadata.namespace,
      // The Certificate's labels travel on (as cert-manager), so ACME solver matchLabels can select on them.
      labels: { ...c.metadata.labels, [api.L.certificateName]: certificateNameLabel(c.metadata.name) },
      // Solver overrides (set by the shims or by hand) travel on to the Order.
      annotations: {
        ...overrideAnnotationsOf(c.metadata.annotations),
        [api.A.revision]: String(revision),
        [api.A.privateKeySecretName]: key.secretName,
        [api.A.certificateName]: c.metadata.name,
      },
      ownerReferences: [controllerReference(api.Certificate.kind, c)],
    },
    spec: {
      request: b64(await createCSR(c.spec, key.key)),
      issuerRef: c.spec.issuerRef,
      // As a Go client writes them (metav1.Duration's form, no `isCA: false`): the spec is
      // immutable, compared whole, and an external issuer's Go controller updates the request's
      // metadata with the spec it read back (the AWS Private CA issuer does).
      duration: goDuration(parseDuration(c.spec.duration ?? DEFAULT_DURATION)),
      ...(c.spec.isCA ? { isCA: true } : {}),
      // The Certificate's usages as written, as cert-manager's request manager copies them: the
      // signer fills in the defaults. Filled in here, cert-manager compared them with an empty spec
      // list and issued again after a rollback (takeover.int.test.ts).
      ...(c.spec.usages?.length ? { usages: c.spec.usages as KeyUsage[] } : {}),
    },
  });
  ctx.recorder.normal(c, 'Requested', `Created new CertificateRequest resource "${name}"`);
}

/** Keeps the newest revisionHistoryLimit finished requests (default 1), as cert-manager's revisionmanager; drops spare keys. */
export async function prune(api: CertApi, c: CertificateObject, ctx: ReconcileContext): Promise<void> {
  const limit = c.spec.revisionHistoryLimit ?? 1;
  const done = (await requestsOf(api, c, ctx))
    .filter((cr) => revisionOf(api, cr) <= (c.status?.revision ?? 0))
    .sort((a, b) => revisionOf(api, b) - revisionOf(api, a));
  for (const cr of done.slice(limit)) await ctx.delete(api.CertificateRequest.kind, cr);
  for (const s of await nextKeySecrets(api, c, ctx)) await ctx.delete(Secret, s);
}

/** Where the request manager leaves an issuance: waiting (with the reconcile's result), or signed. */
export type RequestStep = { wait: Result } | { signed: CertificateRequestObject };

/**
 * The request manager's step: the revision's request created (for the next key and this spec),
 * replaced when it asks for something else or its failure was counted, its failure counted once
 * (backoff in status), or waited for. Only a signed request goes on to issuing.
 */
export async function manageRequest(
  api: CertApi,
  c: CertificateObject,
  ctx: ReconcileContext,
  at: {
    requests: CertificateRequestObject[];
    revision: number;
    next: NextKey;
    why: { reason: string; message: string };
    inProgress: boolean;
    forced: boolean;
    starting: StatusEdit;
    now: Date;
  },
): Promise<RequestStep> {
  const { revision, next, why, inProgress, forced, starting } = at;
  const ref = { namespace: c.metadata.namespace, name: c.metadata.name };
  const crName = childName(c.metadata.name, String(revision));
  const cr = at.requests.find((r) => r.metadata.name === crName);
  if (!cr) {
    if (!inProgress) ctx.recorder.normal(c, 'Issuing', why.message);
    await createRequest(api, c, ctx, crName, revision, next);
    await writeStatus(api, c, ctx, starting, (_s, set) => set({ type: 'Issuing', status: 'True', reason: why.reason, message: why.message }));
    // Removed only once the issuance is recorded as under way (Issuing=True), so its end is still
    // known for what it is.
    if (forced)
      await ctx
        .patch(api.Certificate.kind, ref, [{ op: 'remove', path: `/metadata/annotations/${api.A.renew.replace('/', '~1')}` }], 'json')
        .catch(() => undefined);
    return { wait: undefined };
  }
  const crReady = conditionOf(cr.status?.conditions, 'Ready');
  const crFailed = requestFailed(cr);
  // A failure already counted, or a request for an outdated spec or key: replace it.
  const counted = crFailed && c.status?.lastFailureTime && cr.status?.failureTime && c.status.lastFailureTime >= cr.status.failureTime;
  if (counted || !(await requestStillWanted(api, cr, c, next))) {
    await ctx.delete(api.CertificateRequest.kind, { namespace: c.metadata.namespace, name: crName }, { preconditions: { uid: cr.metadata.uid } });
    return { wait: { requeue: true } };
  }
  if (crFailed) {
    const failures = (c.status?.failedIssuanceAttempts ?? 0) + 1;
    // The deciding condition's words, as cert-manager's issuing controller: a denial's own reason
    // and message (the approver's, e.g. `cmctl deny --reason`), else the failure's.
    const denied = conditionOf(cr.status?.conditions, 'Denied');
    const decided = denied?.status === 'True' ? denied : crReady!;
    const message = `The certificate request has failed to complete and will be retried: ${decided.message}`;
    ctx.recorder.warning(c, 'Failed', message);
    await writeStatus(api, c, ctx, starting, (s, set) => {
      s.failedIssuanceAttempts = failures;
      s.lastFailureTime = rfc3339(at.now);
      set({ type: 'Issuing', status: 'False', reason: decided.reason || 'Failed', message });
    });
    return { wait: { requeueAfter: issuanceBackoffMs(failures) } };
  }
  if (crReady?.status !== 'True' || !cr.status?.certificate) {
    // The request's progress, once it has run for a while (progress.ts): until then Issuing keeps
    // saying why the issuance started.
    const settled = settleMessage(
      conditionOf(c.status?.conditions, 'Issuing'),
      {
        type: 'Issuing',
        status: 'True',
        reason: why.reason,
        message: `Waiting for CertificateRequest "${crName}" to complete: ${crReady?.message ?? 'not processed yet'}`,
        observedGeneration: c.metadata.generation,
      },
      at.now.getTime(),
      PROGRESS_QUIET_MS,
    );
    const { observedGeneration: _set, ...issuing } = settled.condition;
    await writeStatus(api, c, ctx, starting, (_s, set) => set(issuing));
    return { wait: settled.recheckAfterMs === undefined ? undefined : { requeueAfter: settled.recheckAfterMs } };
  }
  return { signed: cr };
}
