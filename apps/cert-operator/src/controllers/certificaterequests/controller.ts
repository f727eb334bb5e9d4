import {
  byController,
  CONTROLLER_INDEX,
  controllerFor,
  finishing,
  isForbidden,
  parseDuration,
  rfc3339,
  settleMessage,
  type Condition,
  type ReconcileContext,
  type Request,
  type Result,
} from '@opkit/runtime';
import { orderEnded } from '../../api/acme/v1/order.js';
import type { CertApi } from '../../api/index.js';
import type { CertificateRequestObject } from '../../api/v1/certificaterequest.js';
import type { KeyUsage } from '../../api/v1/shared.js';
import type { CertOperatorConfig } from '../../config.js';
import { loadCAKeyPair } from '../../issuers/ca-keypair.js';
import { issuerIndexKey, issuerReady, resolveIssuer, type ResolvedIssuer } from '../../issuers/resolve.js';
import { parseCSR, type ParsedCSR } from '../../pki/csr.js';
import { parsePrivateKey, publicKeyDer } from '../../pki/keys.js';
import { caSign, selfSign, type Issued } from '../../pki/sign.js';
import { effectiveUsages } from '../../pki/usages.js';
import { secretData, SecretReader } from '../../secrets/secret-reader.js';
import { PROGRESS_QUIET_MS } from '../progress.js';

export const CR_ISSUER_INDEX = 'spec.issuerRef';
const DEFAULT_DURATION_MS = 2160 * 3_600_000;

const cond = (cr: CertificateRequestObject, type: string) => cr.status?.conditions?.find((c) => c.type === type);
export const b64 = (s: string) => Buffer.from(s).toString('base64');
export const unb64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');

/** The outcome of one signing attempt: issued, still pending (why), or failed for good (why). */
export type SignOutcome = { issued: Issued } | { pending: string; requeueAfter?: number } | { failed: string };

/** A signer for one issuer type. ACME plugs in its own (Orders and Challenges). */
export type Signer = (cr: CertificateRequestObject, csr: ParsedCSR, issuer: ResolvedIssuer, ctx: ReconcileContext, api: CertApi) => Promise<SignOutcome>;

const template = (cr: CertificateRequestObject, csr: ParsedCSR) => ({
  csr,
  durationMs: cr.spec.duration ? parseDuration(cr.spec.duration) : DEFAULT_DURATION_MS,
  isCA: !!cr.spec.isCA,
  usages: effectiveUsages(cr.spec.usages as KeyUsage[] | undefined, cr.spec.isCA),
});

/** SelfSigned: the certificate is signed by its own key, found through the request's annotation. */
const signSelfSigned: Signer = async (cr, csr, issuer, ctx, { A, labelled }) => {
  const keySecret = cr.metadata.annotations?.[A.privateKeySecretName];
  if (!keySecret) return { failed: `the SelfSigned issuer needs the private key: annotation ${A.privateKeySecretName} is missing` };
  const secret = await new SecretReader(ctx.cache, ctx.client, labelled).read({ namespace: cr.metadata.namespace!, name: keySecret });
  const pem = secretData(secret, 'tls.key');
  if (!pem) return { pending: `private key Secret "${keySecret}" not found`, requeueAfter: 5_000 };
  const key = parsePrivateKey(pem);
  if (!publicKeyDer(key).equals(publicKeyDer(csr.publicKey)))
    return { failed: `the private key in Secret "${keySecret}" does not match the request's public key` };
  return { issued: await selfSign({ ...template(cr, csr), crlDistributionPoints: issuer.issuer.spec.selfSigned?.crlDistributionPoints }, key) };
};

/** CA: the CA issuer's pair signs; the chain and root go with the certificate. */
const signCA: Signer = async (cr, csr, issuer, ctx, { labelled }) => {
  const pair = await loadCAKeyPair(new SecretReader(ctx.cache, ctx.client, labelled), issuer.resourceNamespace, issuer.issuer.spec.ca!.secretName);
  if (!pair.ok) return { pending: pair.message, requeueAfter: 30_000 };
  const { crlDistributionPoints, ocspServers, issuingCertificateURLs } = issuer.issuer.spec.ca!;
  return { issued: await caSign({ ...template(cr, csr), crlDistributionPoints, ocspServers, issuingCertificateURLs }, pair) };
};

export function certificateRequestController(cfg: CertOperatorConfig, signers: { acme?: Signer } = {}) {
  const { api } = cfg;
  const { CertificateRequest, Issuer, ClusterIssuer, Order, groups } = api;
  /**
   * An external issuer's request: its own controller signs it and owns Ready. Approval is still
   * given here, as cert-manager's approver gives it to every request (message and reason
   * included), where the operator may approve that issuer's signer: the approval webhook asks RBAC,
   * and a refusal is said once, not retried (grant `approve` on `signers` `<plural>.<group>/*`).
   */
  async function approveExternal(cr: CertificateRequestObject, ctx: ReconcileContext): Promise<void> {
    const decided = cond(cr, 'Approved') || cond(cr, 'Denied');
    const done = ['Issued', 'Failed'].includes(cond(cr, 'Ready')?.reason ?? '');
    if (!cfg.autoApprove || decided || done) return;
    try {
      await setStatus(cr, ctx, [{ type: 'Approved', status: 'True', reason: groups.cert, message: `Certificate request has been approved by ${groups.cert}` }]);
    } catch (err) {
      if (!isForbidden(err)) throw err;
      ctx.recorder.warning(cr, 'ApprovalRefused', `Not approved automatically: ${(err as Error).message}`);
    }
  }

  async function setStatus(
    cr: CertificateRequestObject,
    ctx: ReconcileContext,
    conditions: Omit<Condition, 'lastTransitionTime'>[],
    extra: Partial<NonNullable<CertificateRequestObject['status']>> = {},
  ) {
    let list = (cr.status?.conditions as Condition[] | undefined) ?? [];
    // No observedGeneration: a request's spec never changes, and cert-manager's CRD has no such field
    // (a status naming it is refused there, which cert-manager mode runs on).
    for (const c of conditions) list = ctx.setCondition(list, c);
    await ctx.updateStatus(CertificateRequest.kind, cr, { ...cr.status, ...extra, conditions: list });
  }

  async function reconcile(req: Request, ctx: ReconcileContext): Promise<Result> {
    const cr = await ctx.cache.get(CertificateRequest.kind, req);
    // A request being deleted is signed no further: its Orders are being orphaned or collected, and
    // acting on them now would take an orphaned Order for another request's.
    if (!cr || cr.metadata.deletionTimestamp) return;
    const ready = cond(cr, 'Ready');
    if (ready?.status === 'True' || (ready?.status === 'False' && (ready.reason === 'Failed' || ready.reason === 'Denied'))) return; // one-shot: done

    if (cond(cr, 'Denied')?.status === 'True') {
      ctx.recorder.warning(cr, 'Denied', 'The CertificateRequest was denied by an approval controller');
      return setStatus(
        cr,
        ctx,
        [{ type: 'Ready', status: 'False', reason: 'Denied', message: 'The CertificateRequest was denied by an approval controller' }],
        { failureTime: rfc3339(new Date(ctx.clock.now())) },
      );
    }
    if (!api.isOurGroup(cr.spec.issuerRef.group)) return approveExternal(cr, ctx);

    // The operator approves its own issuers' requests when autoApprove is on. Being the approver,
    // it writes the approval with whatever this pass comes to (signed, pending, failed): one status
    // write fewer per certificate, and no reconcile of its own write in between. Another approver
    // (autoApprove off) writes Approved itself, and signing waits for it.
    const approval: Omit<Condition, 'lastTransitionTime'>[] = [];
    if (cond(cr, 'Approved')?.status !== 'True') {
      if (!cfg.autoApprove)
        return setStatus(cr, ctx, [{ type: 'Ready', status: 'False', reason: 'Pending', message: 'Waiting for the CertificateRequest to be approved' }]);
      approval.push({ type: 'Approved', status: 'True', reason: groups.cert, message: `Certificate request has been approved by ${groups.cert}` });
    }
    const write = (conditions: Omit<Condition, 'lastTransitionTime'>[], extra?: Partial<NonNullable<CertificateRequestObject['status']>>) =>
      setStatus(cr, ctx, [...approval, ...conditions], extra);

    // A request that cannot be read is invalid whatever its issuer: cert-manager's InvalidRequest
    // condition, final, beside Ready=False Failed (which the Certificate's backoff reads).
    let csr: ParsedCSR;
    try {
      csr = await parseCSR(unb64(cr.spec.request));
    } catch (err) {
      const message = `the request's CSR cannot be parsed: ${(err as Error).message}`;
      ctx.recorder.warning(cr, 'RequestParsingError', message);
      return write(
        [
          { type: 'InvalidRequest', status: 'True', reason: 'RequestParsingError', message },
          { type: 'Ready', status: 'False', reason: 'Failed', message },
        ],
        { failureTime: rfc3339(new Date(ctx.clock.now())) },
      );
    }

    const lookup = await resolveIssuer(ctx.cache, cr.spec.issuerRef, req.namespace!, cfg);
    if (!lookup.ok) return write([{ type: 'Ready', status: 'False', reason: 'Pending', message: `Referenced issuer is not available: ${lookup.message}` }]);
    const readiness = issuerReady(lookup.resolved.issuer);
    if (readiness?.status !== 'True') {
      return write([
        {
          type: 'Ready',
          status: 'False',
          reason: 'Pending',
          message: `Referenced ${lookup.resolved.kind} "${cr.spec.issuerRef.name}" is not ready: ${readiness?.message ?? 'no Ready condition yet'}`,
        },
      ]);
    }

    const fail = async (message: string) => {
      ctx.recorder.warning(cr, 'Failed', message);
      await write([{ type: 'Ready', status: 'False', reason: 'Failed', message }], { failureTime: rfc3339(new Date(ctx.clock.now())) });
    };
    const spec = lookup.resolved.issuer.spec;
    const signer = spec.selfSigned ? signSelfSigned : spec.ca ? signCA : spec.acme ? signers.acme : undefined;
    if (!signer) return fail('the referenced issuer has no supported type');
    const outcome = await signer(cr, csr, lookup.resolved, ctx, api);
    if ('failed' in outcome) return fail(outcome.failed);
    if ('pending' in outcome) {
      // A step of work in flight: written once the request has been pending for a while (progress.ts).
      const settled = settleMessage(
        cond(cr, 'Ready'),
        { type: 'Ready', status: 'False', reason: 'Pending', message: outcome.pending },
        ctx.clock.now(),
        PROGRESS_QUIET_MS,
      );
      await write([settled.condition]);
      const after = Math.min(outcome.requeueAfter ?? Infinity, settled.recheckAfterMs ?? Infinity);
      return Number.isFinite(after) ? { requeueAfter: after } : undefined;
    }
    ctx.recorder.normal(cr, 'CertificateIssued', 'Certificate fetched from issuer successfully');
    return write([{ type: 'Ready', status: 'True', reason: 'Issued', message: 'Certificate fetched from issuer successfully' }], {
      certificate: b64(outcome.issued.certificate),
      ...(outcome.issued.ca ? { ca: b64(outcome.issued.ca) } : {}),
    });
  }

  const byIssuer =
    (kind: 'Issuer' | 'ClusterIssuer') =>
    async (issuer: { metadata: { name: string; namespace: string } }, { cache }: { cache: ReconcileContext['cache'] }) =>
      (
        await cache.list(CertificateRequest.kind, {
          namespace: kind === 'Issuer' ? issuer.metadata.namespace : undefined,
          index: { name: CR_ISSUER_INDEX, value: issuerIndexKey({ kind, name: issuer.metadata.name }) },
        })
      ).map((c) => ({
        namespace: c.metadata.namespace,
        name: c.metadata.name,
      }));

  let builder = controllerFor(CertificateRequest.kind)
    .named('certificaterequest')
    .withIndex(CertificateRequest.kind, CR_ISSUER_INDEX, (c) => [issuerIndexKey(c.spec.issuerRef)])
    .watches(Issuer.kind, byIssuer('Issuer'))
    .watches(ClusterIssuer.kind, byIssuer('ClusterIssuer'));
  // ACME requests complete through their Order, found by its controller (signer.ts) without a scan.
  if (signers.acme) builder = builder.owns(Order.kind, { priority: finishing(orderEnded) }).withIndex(Order.kind, CONTROLLER_INDEX, byController);
  return builder.withOptions({ maxConcurrentReconciles: 4, errorCondition: 'Ready' }).reconcile(reconcile);
}
