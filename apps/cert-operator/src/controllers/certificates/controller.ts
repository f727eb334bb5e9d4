import { controllerFor, controllerReference, removeCondition, rfc3339, Secret, type Condition, type ReconcileContext, type Request, type Result } from '@opkit/runtime';
import { Certificate, DEFAULT_DURATION, type CertificateObject } from '../../api/v1/certificate.js';
import { CertificateRequest, type CertificateRequestObject } from '../../api/v1/certificaterequest.js';
import { ClusterIssuer, Issuer } from '../../api/v1/issuer.js';
import { A, L, type KeyUsage } from '../../api/v1/shared.js';
import type { CertOperatorConfig } from '../../config.js';
import { issuerIndexKey, issuerReady, resolveIssuer } from '../../issuers/resolve.js';
import { createCSR } from '../../pki/csr.js';
import { certificateMatchesKey, inspectCertificate } from '../../pki/inspect.js';
import { encodePrivateKey, keySpecOf, publicKeyDer } from '../../pki/keys.js';
import { issuanceBackoffMs, renewalTime } from '../../pki/renewal.js';
import { effectiveUsages } from '../../pki/usages.js';
import { LABELLED, METADATA, SecretReader } from '../../secrets/secret-reader.js';
import { b64, unb64 } from '../certificaterequests/controller.js';
import { nextKeySecrets, nextPrivateKey } from './next-key.js';
import { desiredSecret } from './secret.js';
import { issuanceReason, readSecretState, requestMatches, type SecretState } from './trigger.js';
import { validateCertificate } from './validate.js';
import { certificatesRbac } from '../rbac.js';

export const SECRET_NAME_INDEX = 'spec.secretName';
export const CERT_ISSUER_INDEX = 'spec.issuerRef';
/** A second overwrite of the Secret within this window counts as contention, not a reason to re-issue. */
const CONTENTION_WINDOW_MS = 10 * 60_000;
/** Node timers and humans both prefer rechecks at least daily. */
const MAX_REQUEUE_MS = 24 * 3_600_000;

type Status = NonNullable<CertificateObject['status']>;
type Cond = Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>;

const cond = (list: readonly { type: string }[] | undefined, type: string) => list?.find((c) => c.type === type) as Condition | undefined;
const revisionOf = (cr: CertificateRequestObject) => Number(cr.metadata.annotations?.[A.revision] ?? 0);

export function certificateController(cfg: CertOperatorConfig) {
  /** Writes the status computed by `next` from the current one, if it changed. */
  async function writeStatus(c: CertificateObject, ctx: ReconcileContext, next: (s: Status, set: (x: Cond) => void, unset: (t: string) => void) => void) {
    const status: Status = structuredClone(c.status ?? {});
    let conditions = (status.conditions as Condition[] | undefined) ?? [];
    const set = (x: Cond): void => {
      conditions = ctx.setCondition(conditions, { ...x, observedGeneration: c.metadata.generation });
    };
    const unset = (t: string): void => {
      conditions = removeCondition(conditions, t);
    };
    next(status, set, unset);
    const result = status;
    result.conditions = conditions;
    if (!result.conditions.length) delete result.conditions;
    await ctx.updateStatus(Certificate.kind, c, result);
  }

  /** Records a Ready=False verdict (and an event when it is news). */
  async function notReady(c: CertificateObject, ctx: ReconcileContext, reason: string, message: string, event = true) {
    const prev = cond(c.status?.conditions, 'Ready');
    if (event && (prev?.reason !== reason || prev.message !== message)) ctx.recorder.warning(c, reason, message);
    await writeStatus(c, ctx, (_s, set) => set({ type: 'Ready', status: 'False', reason, message }));
  }

  async function requestsOf(c: CertificateObject, ctx: ReconcileContext) {
    return (await ctx.cache.list(CertificateRequest.kind, { namespace: c.metadata.namespace, labelSelector: { [L.certificateName]: c.metadata.name } })).filter(
      (cr) => cr.metadata.ownerReferences?.some((o) => o.uid === c.metadata.uid),
    );
  }

  /** Keeps the newest revisionHistoryLimit requests (default 1), as cert-manager's revisionmanager. */
  async function prune(c: CertificateObject, ctx: ReconcileContext) {
    const limit = c.spec.revisionHistoryLimit ?? 1;
    const done = (await requestsOf(c, ctx)).filter((cr) => revisionOf(cr) <= (c.status?.revision ?? 0)).sort((a, b) => revisionOf(b) - revisionOf(a));
    for (const cr of done.slice(limit)) await ctx.delete(CertificateRequest.kind, cr);
    for (const s of await nextKeySecrets(c, ctx)) await ctx.delete(Secret, s);
  }

  /** The field manager that last wrote the Secret's key, to name it in messages. */
  async function secretWriter(c: CertificateObject, ctx: ReconcileContext): Promise<string> {
    const s = await ctx.client.find(Secret, { namespace: c.metadata.namespace, name: c.spec.secretName });
    const other = s?.metadata.managedFields?.filter((f) => f.manager !== ctx.client.options.fieldManager && JSON.stringify(f.fieldsV1 ?? {}).includes('"f:data"'));
    return other?.length ? other.map((f) => f.manager).join(', ') : 'another writer';
  }

  async function reconcile(req: Request, ctx: ReconcileContext): Promise<Result> {
    const { cache, client, recorder } = ctx;
    const c = await cache.get(Certificate.kind, req);
    if (!c || c.metadata.deletionTimestamp) return;
    const now = new Date(ctx.clock.now());

    // 1. Bad input: say what is wrong; nothing else happens until the spec changes.
    const problems = validateCertificate(c);
    if (problems.length) return notReady(c, ctx, 'InvalidSpec', problems.join('; '));

    // 2. Two Certificates, one Secret: the older one owns it; the other waits, without a loop.
    const sharing = (await cache.list(Certificate.kind, { namespace: req.namespace, index: { name: SECRET_NAME_INDEX, value: c.spec.secretName } })).sort(
      (a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') || a.metadata.name.localeCompare(b.metadata.name),
    );
    if (sharing.length > 1 && sharing[0].metadata.uid !== c.metadata.uid) {
      return notReady(c, ctx, 'DuplicateSecretName', `Secret "${c.spec.secretName}" is already used by Certificate "${sharing[0].metadata.name}", which was created first: give this Certificate its own spec.secretName`);
    }

    // 3. The issuer must exist and be ready; its own changes reconcile us again.
    const lookup = await resolveIssuer(cache, c.spec.issuerRef, req.namespace!, cfg);
    if (!lookup.ok) return notReady(c, ctx, lookup.reason, lookup.message);
    const issuerCond = issuerReady(lookup.resolved.issuer);
    if (issuerCond?.status !== 'True') return notReady(c, ctx, 'IssuerNotReady', `${lookup.resolved.kind} "${c.spec.issuerRef.name}" is not ready: ${issuerCond?.message ?? 'no Ready condition yet'}`);

    // 4. What the Secret holds, repaired from the latest request when only its certificate was lost.
    const requests = await requestsOf(c, ctx);
    const latest = requests.find((cr) => revisionOf(cr) === c.status?.revision && cond(cr.status?.conditions, 'Ready')?.status === 'True');
    const reader = new SecretReader(cache, client);
    let state: SecretState = readSecretState(await reader.read({ namespace: req.namespace!, name: c.spec.secretName }));
    const issuedChain = latest?.status?.certificate ? unb64(latest.status.certificate) : undefined;
    if (state.problem && state.key && issuedChain && certificateMatchesKey(issuedChain, state.key)) {
      await ctx.apply(Secret, desiredSecret(c, { chainPem: issuedChain, keyPem: state.keyPem!, caPem: latest?.status?.ca ? unb64(latest.status.ca) : undefined }, cfg, state.secret?.type), state.secret);
      recorder.normal(c, 'SecretRepaired', `Restored the certificate in Secret "${c.spec.secretName}" from CertificateRequest "${latest!.metadata.name}"`);
      state = readSecretState(await reader.read({ namespace: req.namespace!, name: c.spec.secretName }));
    }

    // 5. Does a new certificate have to be issued?
    const forced = c.metadata.annotations?.[A.renew] !== undefined;
    const why = forced ? { reason: 'ManuallyTriggered', message: `Certificate re-issuance manually triggered (${A.renew})` } : issuanceReason(c, state, latest, now);
    if (!why) {
      // Up to date: keep the Secret's metadata ours, report Ready, sleep until the renewal time.
      await ctx.apply(Secret, desiredSecret(c, { chainPem: state.certPem!, keyPem: state.keyPem!, caPem: state.caPem }, cfg, state.secret?.type), state.secret);
      const cert = state.cert!;
      const renewAt = renewalTime(cert.notBefore, cert.notAfter, c.spec);
      await writeStatus(c, ctx, (s, set, unset) => {
        s.notBefore = rfc3339(cert.notBefore);
        s.notAfter = rfc3339(cert.notAfter);
        s.renewalTime = rfc3339(renewAt);
        delete s.nextPrivateKeySecretName;
        set({ type: 'Ready', status: 'True', reason: 'Ready', message: 'Certificate is up to date and has not expired' });
        unset('Issuing');
        const marked = cond(s.conditions, 'SecretOverwritten');
        if (marked && now.getTime() - Date.parse(marked.lastTransitionTime) > CONTENTION_WINDOW_MS) unset('SecretOverwritten');
      });
      await prune(c, ctx);
      return { requeueAfter: Math.min(MAX_REQUEUE_MS, renewAt.getTime() - now.getTime() + 1_000) };
    }

    // 6. Failed before with this spec: wait out the backoff (1 h doubling to 32 h). A spec change or a
    //    manual renewal starts afresh.
    const failures = c.status?.failedIssuanceAttempts ?? 0;
    const lastAttempt = cond(c.status?.conditions, 'Issuing');
    // Only between attempts: an issuance already under way (a forced one, say) runs to its end.
    const betweenAttempts = lastAttempt?.status === 'False' && lastAttempt.observedGeneration === c.metadata.generation;
    if (failures && !forced && betweenAttempts && c.status?.lastFailureTime) {
      const retryAt = Date.parse(c.status.lastFailureTime) + issuanceBackoffMs(failures);
      if (retryAt > now.getTime()) {
        const contention = lastAttempt.reason === 'SecretContention';
        const message = contention ? lastAttempt.message : `${why.message}; the last attempt failed, retrying at ${new Date(retryAt).toISOString()} (attempt ${failures + 1})`;
        if (state.problem || why.reason === 'Expired' || why.reason === 'SpecChanged') await notReady(c, ctx, contention ? 'SecretContention' : why.reason, message, false);
        return { requeueAfter: Math.min(MAX_REQUEUE_MS, retryAt - now.getTime()) };
      }
    }

    // 7. Someone keeps overwriting the Secret's key. The first time, re-issue. If it happens again
    //    right after that re-issuance, it is a fight with another writer: back off, do not storm.
    const issuing = cond(c.status?.conditions, 'Issuing')?.status === 'True';
    const overwritten = !!state.secret && !!state.problem && ['InvalidKeyPair', 'InvalidCertificate', 'MissingData'].includes(state.problem.reason);
    if (overwritten && !forced && !issuing && c.status?.revision) {
      const marked = cond(c.status.conditions, 'SecretOverwritten');
      const readySince = cond(c.status.conditions, 'Ready');
      const reissuedSinceMark = marked && readySince?.status === 'True' && Date.parse(readySince.lastTransitionTime) >= Date.parse(marked.lastTransitionTime);
      const writer = await secretWriter(c, ctx);
      if (marked && reissuedSinceMark && now.getTime() - Date.parse(marked.lastTransitionTime) < CONTENTION_WINDOW_MS) {
        const retryAt = new Date(now.getTime() + issuanceBackoffMs(failures + 1));
        const message = `Secret "${c.spec.secretName}" keeps being overwritten (by ${writer}): not re-issuing into a fight; retrying at ${retryAt.toISOString()}. Stop the other writer, or force a renewal with the ${A.renew} annotation`;
        recorder.warning(c, 'SecretContention', message);
        await writeStatus(c, ctx, (s, set) => {
          s.failedIssuanceAttempts = failures + 1;
          s.lastFailureTime = rfc3339(now);
          set({ type: 'Issuing', status: 'False', reason: 'SecretContention', message });
          set({ type: 'Ready', status: 'False', reason: 'SecretContention', message });
        });
        return { requeueAfter: issuanceBackoffMs(failures + 1) };
      }
      recorder.warning(c, 'SecretOverwritten', `Secret "${c.spec.secretName}" was overwritten by ${writer}: ${why.message}`);
    }

    // 8. Issue: the next key, a CertificateRequest for it, then the Secret once it is signed. Each
    //    branch writes the status once, so our own writes settle instead of re-triggering us.
    if (!issuing) recorder.normal(c, 'Issuing', why.message);
    const next = await nextPrivateKey(c, state, ctx);
    const revision = (c.status?.revision ?? 0) + 1;
    const base = (s: Status, set: (x: Cond) => void, unset: (t: string) => void) => {
      if (next.temporary) s.nextPrivateKeySecretName = next.secretName;
      if (state.problem || why.reason === 'SpecChanged' || why.reason === 'Expired') set({ type: 'Ready', status: 'False', reason: why.reason, message: why.message });
      if (overwritten && !issuing) {
        unset('SecretOverwritten');
        set({ type: 'SecretOverwritten', status: 'True', reason: 'DataOverwritten', message: `the Secret's data was overwritten (${why.message})` });
      }
    };
    const crName = `${c.metadata.name}-${revision}`;
    const cr = requests.find((r) => r.metadata.name === crName);

    if (!cr) {
      const csr = await createCSR(c.spec, next.key);
      await ctx.create(CertificateRequest.kind, {
        metadata: {
          name: crName,
          namespace: req.namespace,
          // The Certificate's labels travel on (as cert-manager), so ACME solver matchLabels can select on them.
          labels: { ...c.metadata.labels, [L.certificateName]: c.metadata.name },
          annotations: { [A.revision]: String(revision), [A.privateKeySecretName]: next.secretName, [A.certificateName]: c.metadata.name },
          ownerReferences: [controllerReference(Certificate.kind, c)],
        },
        spec: {
          request: b64(csr),
          issuerRef: c.spec.issuerRef,
          duration: c.spec.duration ?? DEFAULT_DURATION,
          isCA: !!c.spec.isCA,
          usages: effectiveUsages(c.spec.usages as KeyUsage[] | undefined, c.spec.isCA),
        },
      });
      recorder.normal(c, 'Requested', `Created new CertificateRequest resource "${crName}"`);
      await writeStatus(c, ctx, (s, set, unset) => {
        base(s, set, unset);
        set({ type: 'Issuing', status: 'True', reason: why.reason, message: why.message });
      });
      if (forced) await ctx.patch(Certificate.kind, req, [{ op: 'remove', path: `/metadata/annotations/${A.renew.replace('/', '~1')}` }], 'json').catch(() => undefined);
      return;
    }

    const crReady = cond(cr.status?.conditions, 'Ready');
    const crFailed = crReady?.status === 'False' && (crReady.reason === 'Failed' || crReady.reason === 'Denied');
    // A request for an outdated spec or key, or a failure already counted: replace it.
    const recorded = crFailed && c.status?.lastFailureTime && cr.status?.failureTime && c.status.lastFailureTime >= cr.status.failureTime;
    if (recorded || !(await requestMatches(cr, c, publicKeyDer(next.key)))) {
      await ctx.delete(CertificateRequest.kind, { namespace: req.namespace, name: crName }, { preconditions: { uid: cr.metadata.uid } });
      return { requeue: true };
    }
    if (crFailed) {
      const message = `The certificate request has failed to complete and will be retried: ${crReady!.message}`;
      recorder.warning(c, 'Failed', message);
      await writeStatus(c, ctx, (s, set, unset) => {
        base(s, set, unset);
        s.failedIssuanceAttempts = failures + 1;
        s.lastFailureTime = rfc3339(now);
        set({ type: 'Issuing', status: 'False', reason: 'Failed', message });
        if (state.problem) set({ type: 'Ready', status: 'False', reason: state.problem.reason, message });
      });
      return { requeueAfter: issuanceBackoffMs(failures + 1) };
    }
    if (crReady?.status !== 'True' || !cr.status?.certificate) {
      await writeStatus(c, ctx, (s, set, unset) => {
        base(s, set, unset);
        set({ type: 'Issuing', status: 'True', reason: why.reason, message: `Waiting for CertificateRequest "${crName}" to complete: ${crReady?.message ?? 'not processed yet'}` });
      });
      return;
    }

    // Signed: write the Secret, record the revision, and schedule the renewal.
    const chainPem = unb64(cr.status.certificate);
    if (!certificateMatchesKey(chainPem, next.key)) throw new Error(`CertificateRequest "${crName}" returned a certificate for another key`);
    await ctx.apply(
      Secret,
      desiredSecret(c, { chainPem, keyPem: encodePrivateKey(next.key, keySpecOf(c.spec.privateKey).encoding), caPem: cr.status.ca ? unb64(cr.status.ca) : undefined }, cfg, state.secret?.type),
      state.secret,
    );
    const info = inspectCertificate(chainPem);
    const renewAt = renewalTime(info.notBefore, info.notAfter, c.spec);
    recorder.normal(c, 'Issued', `The certificate has been successfully issued (revision ${revision}, valid until ${info.notAfter.toISOString()})`);
    await writeStatus(c, ctx, (s, set, unset) => {
      s.revision = revision;
      s.notBefore = rfc3339(info.notBefore);
      s.notAfter = rfc3339(info.notAfter);
      s.renewalTime = rfc3339(renewAt);
      delete s.nextPrivateKeySecretName;
      delete s.failedIssuanceAttempts;
      delete s.lastFailureTime;
      set({ type: 'Ready', status: 'True', reason: 'Ready', message: 'Certificate is up to date and has not expired' });
      unset('Issuing');
    });
    await prune((await cache.get(Certificate.kind, req)) ?? c, ctx);
    return { requeueAfter: Math.min(MAX_REQUEUE_MS, renewAt.getTime() - ctx.clock.now() + 1_000) };
  }

  const byIssuer = (kind: 'Issuer' | 'ClusterIssuer') => async (issuer: { metadata: { name: string; namespace: string } }, { cache }: { cache: ReconcileContext['cache'] }) =>
    (await cache.list(Certificate.kind, { namespace: kind === 'Issuer' ? issuer.metadata.namespace : undefined, index: { name: CERT_ISSUER_INDEX, value: issuerIndexKey({ kind, name: issuer.metadata.name }) } })).map((c) => ({
      namespace: c.metadata.namespace,
      name: c.metadata.name,
    }));
  const bySecret = async (s: { metadata: { name: string; namespace: string } }, { cache }: { cache: ReconcileContext['cache'] }) =>
    (await cache.list(Certificate.kind, { namespace: s.metadata.namespace, index: { name: SECRET_NAME_INDEX, value: s.metadata.name } })).map((c) => ({ namespace: c.metadata.namespace, name: c.metadata.name }));

  const bySharedSecret = async (c: CertificateObject, { cache }: { cache: ReconcileContext['cache'] }) =>
    (await cache.list(Certificate.kind, { namespace: c.metadata.namespace, index: { name: SECRET_NAME_INDEX, value: c.spec.secretName } }))
      .filter((o) => o.metadata.uid !== c.metadata.uid)
      .map((o) => ({ namespace: o.metadata.namespace, name: o.metadata.name }));

  return controllerFor(Certificate.kind)
    .withRbac(certificatesRbac)
    .named('certificate')
    .withIndex(Certificate.kind, SECRET_NAME_INDEX, (c) => [c.spec.secretName])
    .withIndex(Certificate.kind, CERT_ISSUER_INDEX, (c) => [issuerIndexKey(c.spec.issuerRef)])
    .owns(CertificateRequest.kind)
    // The target Secret: through the metadata cache (it may not carry our label yet) and through
    // the full cache of labelled Secrets, which is what the reconcile reads (each informer delivers
    // on its own, so both must trigger). Then the other Certificates naming the same Secret.
    .watches(Secret, bySecret, { informer: METADATA })
    .watches(Secret, bySecret, { informer: LABELLED })
    .watches(Certificate.kind, bySharedSecret)
    .watches(Issuer.kind, byIssuer('Issuer'))
    .watches(ClusterIssuer.kind, byIssuer('ClusterIssuer'))
    .withOptions({ maxConcurrentReconciles: 4, errorCondition: 'Ready' })
    .reconcile(reconcile);
}

