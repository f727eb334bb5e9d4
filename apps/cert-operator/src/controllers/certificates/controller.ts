import { byController, CONTROLLER_INDEX, controllerFor, finishing, Secret, type ReconcileContext, type Request, type Result } from '@opkit/runtime';
import { annotationIn } from '../../api/groups.js';
import type { CertificateObject } from '../../api/v1/certificate.js';
import type { CertOperatorConfig } from '../../config.js';
import { issuerIndexKey, issuerReady, resolveIssuer } from '../../issuers/resolve.js';
import { certificateMatchesKey } from '../../pki/inspect.js';
import { METADATA, SecretReader } from '../../secrets/secret-reader.js';
import { unb64 } from '../certificaterequests/controller.js';
import { certificatesRbac } from '../rbac.js';
import { CertManagerOwners, TAKEOVER_ANNOTATION } from './cert-manager-owner.js';
import { contention, failureBackoff } from './backoff.js';
import { completeIssuance, upToDate } from './issuing.js';
import { nextPrivateKey } from './next-key.js';
import { keystorePasswordSecrets } from './outputs.js';
import { issuanceReason, keepsReady } from './policies.js';
import type { IssuerRenewal } from './renewal-plan.js';
import { currentRequest, manageRequest, requestEnded, requestsOf } from './requests.js';
import { applySecret } from './secret.js';
import { readSecretState, type SecretState } from './secret-state.js';
import { conditionOf, notReady, writeStatus, type StatusEdit } from './status.js';
import { validateCertificate } from './validate.js';

export const SECRET_NAME_INDEX = 'spec.secretName';
export const CERT_ISSUER_INDEX = 'spec.issuerRef';
export const KEYSTORE_PASSWORD_INDEX = 'spec.keystores.passwordSecretRef';

const MANUAL = 'ManuallyTriggered';

/**
 * A Certificate, step by step (cert-manager splits the same steps into controllers):
 * 1. validate the spec; 2. one Certificate per Secret; 3. the issuer ready;
 * 4. the Secret read (and its certificate restored from the request when only that was lost);
 * 5. the trigger: an issuance under way continues, else a forced renewal, else the policy chain;
 *    nothing to do → readiness (Ready, renewal scheduled);
 * 6. backoff after failures, and no fight with another writer of the Secret;
 * 7. the key manager: the next private key;
 * 8. the request manager: a CertificateRequest for it, replaced when outdated;
 * 9. issuing: the signed certificate into the Secret, the revision recorded.
 */
export function certificateController(cfg: CertOperatorConfig) {
  const { api } = cfg;
  // Beside a cert-manager that still runs (opkit mode), its Certificates may hold Secrets ours name;
  // in cert-manager mode there is no other Certificate kind to defer to.
  const certManager = api.groups.mode === 'opkit' ? new CertManagerOwners() : undefined;
  async function reconcile(req: Request, ctx: ReconcileContext): Promise<Result> {
    const { cache, client, recorder } = ctx;
    const c = await cache.get(api.Certificate.kind, req);
    if (!c || c.metadata.deletionTimestamp) return;
    const now = new Date(ctx.clock.now());

    // 1. Bad input: say what is wrong; nothing else happens until the spec changes.
    const problems = validateCertificate(c, api.isOurGroup);
    if (problems.length) return notReady(api, c, ctx, 'InvalidSpec', problems.join('; '));

    // 2. Two Certificates, one Secret: the one the Secret says it holds keeps it (else the older);
    //    the other waits, without a loop.
    const reader = new SecretReader(cache, client, api.labelled);
    const sharing = (await cache.list(api.Certificate.kind, { namespace: req.namespace, index: { name: SECRET_NAME_INDEX, value: c.spec.secretName } })).sort(
      (a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') || a.metadata.name.localeCompare(b.metadata.name),
    );
    if (sharing.length > 1) {
      const held = await reader.read({ namespace: req.namespace!, name: c.spec.secretName });
      const holderName = annotationIn(api.groups, held, 'certificate-name');
      const holder = sharing.find((x) => x.metadata.name === holderName);
      const owner = holder ?? sharing[0]!;
      if (owner.metadata.uid !== c.metadata.uid)
        return notReady(
          api,
          c,
          ctx,
          'DuplicateSecretName',
          `Secret "${c.spec.secretName}" is already used by Certificate "${owner.metadata.name}", which ${holder ? 'holds it' : 'was created first'}: give this Certificate its own spec.secretName`,
        );
    }

    // 3. The issuer must exist; its own changes reconcile us again. One that is not ready holds
    //    back issuance only: Ready is the certificate's (valid and current, as cert-manager's), and
    //    the issuer's trouble is a condition of its own.
    //    An external issuer's (another group) is not ours to look up: its requests go to its own
    //    controller, and the Certificate is driven as cert-manager drives one, on its requests.
    let issuerTrouble: string | undefined;
    let issuerRenewal: IssuerRenewal | undefined;
    if (api.isOurGroup(c.spec.issuerRef.group)) {
      const lookup = await resolveIssuer(cache, c.spec.issuerRef, req.namespace!, cfg);
      if (!lookup.ok) return notReady(api, c, ctx, lookup.reason, lookup.message);
      const { kind, issuer } = lookup.resolved;
      issuerRenewal = { kind, name: issuer.metadata.name, renewal: issuer.spec.renewal };
      const issuerCond = issuerReady(lookup.resolved.issuer);
      issuerTrouble =
        issuerCond?.status === 'True'
          ? undefined
          : `${lookup.resolved.kind} "${c.spec.issuerRef.name}" is not ready: ${issuerCond?.message ?? 'no Ready condition yet'}`;
    }
    const issuerCondition: StatusEdit = (_s, set, unset) =>
      issuerTrouble ? set({ type: 'IssuerReady', status: 'False', reason: 'IssuerNotReady', message: issuerTrouble }) : unset('IssuerReady');

    // 4. What the Secret holds, repaired from the current request when only its certificate was lost.
    const requests = await requestsOf(api, c, ctx);
    const current = await currentRequest(api, c, requests);
    let state: SecretState = readSecretState(await reader.read({ namespace: req.namespace!, name: c.spec.secretName }));
    const issuedChain = current?.cr.status?.certificate ? unb64(current.cr.status.certificate) : undefined;

    //    A cert-manager Certificate that holds the Secret keeps it, unless a takeover is asked: with
    //    both controllers running (a migration), each would re-issue over the other. Asked only
    //    while the Secret does not hold what this operator issued.
    const theirs = state.certPem === undefined || state.certPem !== issuedChain ? await certManager?.holder(c, state.secret, ctx) : undefined;
    if (theirs && c.metadata.annotations?.[TAKEOVER_ANNOTATION] !== 'true') {
      await notReady(
        api,
        c,
        ctx,
        'SecretOwnedByCertManager',
        `Secret "${c.spec.secretName}" is held by cert-manager's Certificate "${theirs.name}" (cert-manager.io/v1): not issuing into it, or the two would re-issue over each other. Delete that Certificate (its Secret stays), or annotate this one ${TAKEOVER_ANNOTATION}=true to take the Secret over`,
      );
      // cert-manager's Certificates are not watched: look again when the answer expires.
      return { requeueAfter: theirs.lookAgainInMs };
    }
    if (state.problem && state.key && issuedChain && certificateMatchesKey(issuedChain, state.key)) {
      const caPem = current!.cr.status?.ca ? unb64(current!.cr.status.ca) : undefined;
      const repaired = await applySecret(c, { chainPem: issuedChain, keyPem: state.keyPem!, caPem }, state, ctx, cfg, reader);
      if ('problem' in repaired) return notReady(api, c, ctx, repaired.problem.reason, repaired.problem.message);
      recorder.normal(c, 'SecretRepaired', `Restored the certificate in Secret "${c.spec.secretName}" from CertificateRequest "${current!.cr.metadata.name}"`);
      // As written: the cache still holds the damage (never-loops.int.test.ts, the lagging cache).
      state = readSecretState(repaired.secret);
    }

    // 5. The trigger. An issuance under way (Issuing=True) runs to its end: a forced renewal's
    //    annotation is gone by then, and the policies may no longer see a reason, but its request
    //    and key are what the Secret must get.
    const issuingCond = conditionOf(c.status?.conditions, 'Issuing');
    const inProgress = issuingCond?.status === 'True';
    const forced = !inProgress && c.metadata.annotations?.[api.A.renew] !== undefined;
    const why: { reason: string; message: string } | undefined = inProgress
      ? { reason: issuingCond.reason, message: issuingCond.message }
      : forced
        ? { reason: MANUAL, message: `Certificate re-issuance manually triggered (${api.A.renew})` }
        : issuanceReason({ groups: api.groups, certificate: c, secret: state, request: current, now, issuer: issuerRenewal });
    if (!why) return upToDate(c, state, ctx, cfg, reader, now, issuerRenewal, issuerCondition);
    if (issuerTrouble && !inProgress) {
      // Nothing is asked of an issuer that cannot answer. A certificate still valid stays Ready.
      if (keepsReady(why.reason) && !state.problem) return void (await writeStatus(api, c, ctx, issuerCondition));
      return notReady(api, c, ctx, 'IssuerNotReady', issuerTrouble, true, issuerCondition);
    }

    // 6. Failed before: wait out the backoff; someone else keeps writing the Secret: do not fight.
    let overwrittenBy: string | undefined;
    if (!inProgress && !forced) {
      const waiting = await failureBackoff(api, c, state, why, ctx, now);
      if (waiting) return waiting;
      const fight = await contention(api, c, state, issuedChain, why, ctx, now);
      if (fight && 'wait' in fight) return fight.wait;
      overwrittenBy = fight?.overwrittenBy;
    }

    // 7. The key manager: the key the next certificate carries.
    const next = await nextPrivateKey(api, c, state, ctx);
    if ('refused' in next) return notReady(api, c, ctx, 'CannotRegenerateKey', next.refused);

    // Every status write below carries the issuance's own state, so our writes settle.
    const revision = (c.status?.revision ?? 0) + 1;
    const starting: StatusEdit = (s, set, unset) => {
      if (next.temporary) s.nextPrivateKeySecretName = next.secretName;
      if (!keepsReady(why.reason) && !inProgress) set({ type: 'Ready', status: 'False', reason: why.reason, message: why.message });
      if (state.problem) set({ type: 'Ready', status: 'False', reason: state.problem.reason, message: state.problem.message });
      if (overwrittenBy) {
        unset('SecretOverwritten');
        set({
          type: 'SecretOverwritten',
          status: 'True',
          reason: 'DataOverwritten',
          message: `the Secret's data was overwritten by ${overwrittenBy} (${why.message})`,
        });
      }
    };

    // 8. The request manager: one CertificateRequest per revision, for this key and this spec.
    const step = await manageRequest(api, c, ctx, { requests, revision, next, why, inProgress, forced, starting, now });
    if (!('signed' in step)) return step.wait;
    const cr = step.signed;

    // 9. Issuing: the certificate into the Secret, the revision recorded, the renewal scheduled.
    return completeIssuance(c, cr, next, revision, state, ctx, cfg, reader, issuerRenewal);
  }

  const byIssuer =
    (kind: 'Issuer' | 'ClusterIssuer') =>
    async (issuer: { metadata: { name: string; namespace: string } }, { cache }: { cache: ReconcileContext['cache'] }) =>
      (
        await cache.list(api.Certificate.kind, {
          namespace: kind === 'Issuer' ? issuer.metadata.namespace : undefined,
          index: { name: CERT_ISSUER_INDEX, value: issuerIndexKey({ kind, name: issuer.metadata.name }) },
        })
      ).map((c) => ({
        namespace: c.metadata.namespace,
        name: c.metadata.name,
      }));
  const bySecret = async (s: { metadata: { name: string; namespace: string } }, { cache }: { cache: ReconcileContext['cache'] }) =>
    (await cache.list(api.Certificate.kind, { namespace: s.metadata.namespace, index: { name: SECRET_NAME_INDEX, value: s.metadata.name } })).map((c) => ({
      namespace: c.metadata.namespace,
      name: c.metadata.name,
    }));
  // A keystore password changed (or its Secret appeared): the keystores are rebuilt with it.
  const byPasswordSecret = async (s: { metadata: { name: string; namespace: string } }, { cache }: { cache: ReconcileContext['cache'] }) =>
    (await cache.list(api.Certificate.kind, { namespace: s.metadata.namespace, index: { name: KEYSTORE_PASSWORD_INDEX, value: s.metadata.name } })).map(
      (c) => ({
        namespace: c.metadata.namespace,
        name: c.metadata.name,
      }),
    );
  const bySharedSecret = async (c: CertificateObject, { cache }: { cache: ReconcileContext['cache'] }) =>
    (await cache.list(api.Certificate.kind, { namespace: c.metadata.namespace, index: { name: SECRET_NAME_INDEX, value: c.spec.secretName } }))
      .filter((o) => o.metadata.uid !== c.metadata.uid)
      .map((o) => ({ namespace: o.metadata.namespace, name: o.metadata.name }));

  return (
    controllerFor(api.Certificate.kind)
      .withRbac(certificatesRbac(api))
      .named('certificate')
      .withIndex(api.Certificate.kind, SECRET_NAME_INDEX, (c) => [c.spec.secretName])
      .withIndex(api.Certificate.kind, CERT_ISSUER_INDEX, (c) => [issuerIndexKey(c.spec.issuerRef)])
      .withIndex(api.Certificate.kind, KEYSTORE_PASSWORD_INDEX, keystorePasswordSecrets)
      .withIndex(api.CertificateRequest.kind, CONTROLLER_INDEX, byController)
      .withIndex(Secret, CONTROLLER_INDEX, byController, api.labelled)
      // A request's end (signed, failed or denied) finishes the issuance ahead of new work; its
      // progress reports wait their turn (docs/runtime.md, "Finish what was started").
      .owns(api.CertificateRequest.kind, { priority: finishing(requestEnded) })
      // The target Secret: through the metadata cache (it may not carry our label yet) and through
      // the full cache of labelled Secrets, which is what the reconcile reads (each informer delivers
      // on its own, so both must trigger). Then the other Certificates naming the same Secret.
      .watches(Secret, bySecret, { informer: METADATA })
      .watches(Secret, bySecret, { informer: api.labelled })
      .watches(Secret, byPasswordSecret, { informer: METADATA })
      .watches(api.Certificate.kind, bySharedSecret)
      .watches(api.Issuer.kind, byIssuer('Issuer'))
      .watches(api.ClusterIssuer.kind, byIssuer('ClusterIssuer'))
      .withOptions({ maxConcurrentReconciles: 4, errorCondition: 'Ready' })
      .reconcile(reconcile)
  );
}
