import { controllerFor, rfc3339, Secret, type ReconcileContext, type Request, type Result } from '@opkit/runtime';
import { AccountNotReadyError, type AcmeAccounts } from '../../acme/accounts.js';
import { AcmeProblemError, AcmeProtocolError, AcmeRateLimitError, AcmeUnavailableError, parseRetryAfter } from '../../acme/client.js';
import { ARI_POLL, certIdOf, decodeRenewalInfo, fractionOf, nextCheckDelay, RenewalInfoError, type RenewalInfo } from '../../acme/renewal-info.js';
import type { CertificateObject } from '../../api/v1/certificate.js';
import type { CertOperatorConfig } from '../../config.js';
import { resolveIssuer } from '../../issuers/resolve.js';
import { inspectCertificate, splitPem } from '../../pki/inspect.js';
import { conditionOf } from '../certificates/status.js';
import { secretAnnotation } from '../certificates/policies.js';
import { recordsCertificate } from '../certificates/renewal-info.js';
import { renewalPlan, type IssuerRenewal } from '../certificates/renewal-plan.js';
import { readSecretState } from '../certificates/secret-state.js';
import { renewalInfoRbac } from '../rbac.js';

type AriStatus = NonNullable<NonNullable<NonNullable<CertificateObject['status']>['acme']>['ari']>;
/** The certificate an answer is about, and its issuer's renewal settings: what the renewal time is planned from. */
type Replan = { cert: { notBefore: Date; notAfter: Date }; issuer: IssuerRenewal };

/** What the renewal-info controller does for a Certificate now. */
export type AriStep =
  /** Nothing to ask about: no certificate issued yet, or one being issued (its status changes when done). */
  | { kind: 'idle' }
  /** The CA was asked recently: again at `nextCheck`. */
  | { kind: 'wait'; ms: number }
  | { kind: 'ask' };

/**
 * When to ask the CA, from the Certificate alone (pure; table-tested): once a certificate is
 * issued and not being replaced, when nothing is known about it, or its `nextCheck` has come. The
 * status persists `nextCheck`, so a restarted operator (or another replica) does not ask again in
 * a burst; a `nextCheck` that does not parse is asked at once, and then written properly.
 */
export function ariStep(c: CertificateObject, now: number): AriStep {
  if (!c.status?.notAfter || conditionOf(c.status.conditions, 'Issuing')?.status === 'True') return { kind: 'idle' };
  const next = Date.parse(c.status.acme?.ari?.nextCheck ?? '');
  return Number.isFinite(next) && next > now ? { kind: 'wait', ms: next - now } : { kind: 'ask' };
}

/**
 * When the Secret does not (yet) hold the certificate the status names (our cache of Secrets lags
 * the Certificate's, or an issuance failed and is backing off), or the account is not registered
 * yet: looked at again after a minute, not in a tight loop. The next status change comes sooner.
 */
const LOOK_AGAIN_MS = 60_000;
/** A slow issuer's other request is in flight: this certificate waits its turn (30–60 s, spread). */
const ISSUER_BUSY_MS = 30_000;
/** An answer slower than this (or a failure) makes an issuer slow: one request in flight at a time. */
const SLOW_MS = 2_000;
const MAX_ERROR = 1024;
/** What a CA (or its answer) can do wrong: recorded on the Certificate. Anything else is a bug here, and fails the reconcile. */
const KNOWN_FAILURES = [AcmeProblemError, AcmeProtocolError, AcmeRateLimitError, AcmeUnavailableError, RenewalInfoError];

/**
 * ACME Renewal Information (RFC 9773) for each Certificate an ACME issuer of ours issued: the CA's
 * suggested window into `status.acme.ari` (cert-manager v1.21's fields), asked for again at the
 * CA's Retry-After (bounded, acme/renewal-info.ts). The Certificate controller renews at a point of
 * that window (pki/renewal.ts); this controller only asks and records. A CA without a renewalInfo
 * resource leaves renewBefore in charge; one that fails is said on the Certificate (lastError and
 * an ARIError event) and asked again later, the window it gave before still in force.
 */
export function renewalInfoController(cfg: CertOperatorConfig, accounts: AcmeAccounts) {
  const { api } = cfg;

  /**
   * `status.acme.ari` as the CA answered; with the certificate it is about, the renewal time that
   * answer gives, in the same write (renewalPlan decides it, as the Certificate controller does,
   * which then finds nothing to change): one write per answer, not two.
   */
  const writeAri = async (c: CertificateObject, ctx: ReconcileContext, ari: AriStatus | undefined, replan?: Replan) => {
    const { ari: _old, ...rest } = c.status?.acme ?? {};
    const acme = ari ? { ...rest, ari } : rest;
    const status = { ...c.status };
    if (Object.keys(acme).length) status.acme = acme;
    else delete status.acme;
    const at = replan && renewalPlan({ ...c, status }, replan.cert, new Date(ctx.clock.now()), replan.issuer).at;
    if (at) status.renewalTime = rfc3339(at);
    await ctx.updateStatus(api.Certificate.kind, c, status);
  };

  // A slow or failing server (a tenant's, answering as late as it may) has one request in flight at
  // a time, so it holds one of the workers at most and every other issuer's certificates are asked
  // about on the others; a fast one is not held back. Remembered per issuer, in memory: the
  // requests in flight per issuer, and which issuers are slow.
  const asking = new Map<string, number>();
  const slow = new Set<string>();

  async function reconcile(req: Request, ctx: ReconcileContext): Promise<Result> {
    const c = await ctx.cache.get(api.Certificate.kind, req);
    if (!c || c.metadata.deletionTimestamp || !api.isOurGroup(c.spec.issuerRef.group)) return;
    const lookup = await resolveIssuer(ctx.cache, c.spec.issuerRef, req.namespace!, cfg);
    // An issuer gone or not ACME: whatever a CA said before no longer applies.
    if (!lookup.ok || !lookup.resolved.issuer.spec.acme) return c.status?.acme?.ari ? writeAri(c, ctx, undefined) : undefined;
    const now = ctx.clock.now();
    const step = ariStep(c, now);
    if (step.kind === 'idle') return;
    if (step.kind === 'wait') return { requeueAfter: step.ms };

    // Waiting for a slow issuer's request in flight is decided before any Secret is read or parsed:
    // at an operator start, every other certificate of that issuer comes back here.
    const seed = c.metadata.uid ?? `${req.namespace}/${req.name}`;
    const issuerKey = lookup.resolved.issuer.metadata.uid ?? `${lookup.resolved.kind}/${lookup.resolved.issuer.metadata.name}`;
    if (slow.has(issuerKey) && asking.get(issuerKey)) return { requeueAfter: ISSUER_BUSY_MS * (1 + fractionOf(`${seed}/busy/${now}`)) };

    // The certificate the status names, as the Secret holds it, issued by this issuer: the
    // Certificate controller writes the Secret before the status, but our cache of Secrets may lag.
    // The first ask after an issuance reads the Secret from the API server: the certificate replaced
    // may have the same notAfter as its successor (signed within the same second), and a lagging
    // cache would give its window to the successor. Later asks find the cache caught up.
    const secretKey = { namespace: req.namespace!, name: c.spec.secretName };
    const secret = c.status?.acme?.ari ? await ctx.cache.get(Secret, secretKey, api.labelled) : await ctx.client.find(Secret, secretKey);
    const state = readSecretState(secret);
    const leaf = !state.problem && state.certPem ? splitPem(state.certPem)[0] : undefined;
    const cert = leaf ? inspectCertificate(leaf) : undefined;
    if (!cert || !recordsCertificate(c.status, cert.notAfter)) return { requeueAfter: LOOK_AGAIN_MS };
    // Issued by another issuer (the issuerRef changed): the Certificate controller issues anew.
    if (secretAnnotation(api.groups, state, 'issuer-name') !== c.spec.issuerRef.name) return;
    const { kind: issuerKind, issuer } = lookup.resolved;
    const replan: Replan = { cert, issuer: { kind: issuerKind, name: issuer.metadata.name, renewal: issuer.spec.renewal } };
    const base = { ...c.status?.acme?.ari, lastChecked: new Date(now).toISOString() };
    let info: RenewalInfo;
    let retryAfter: string | undefined;
    asking.set(issuerKey, (asking.get(issuerKey) ?? 0) + 1);
    const started = performance.now();
    let failed = true;
    try {
      const session = await accounts.registered(lookup.resolved.issuer, lookup.resolved.resourceNamespace, ctx);
      const { renewalInfo } = await session.directory();
      if (!renewalInfo) {
        failed = false;
        return c.status?.acme?.ari ? await writeAri(c, ctx, undefined, replan) : undefined;
      }
      const answer = await session.renewalInfo(renewalInfo, certIdOf(cert.x509.raw));
      retryAfter = answer.retryAfter;
      info = decodeRenewalInfo(answer.body);
      failed = false;
    } catch (err) {
      if (err instanceof AccountNotReadyError) return { requeueAfter: LOOK_AGAIN_MS };
      if (!KNOWN_FAILURES.some((k) => err instanceof k)) throw err;
      // The same failure gives the same words (a rate limit's message names a time: dropped), so
      // lastError and its event change only when the failure does.
      const message = (
        err instanceof RenewalInfoError
          ? `the ACME server's renewal info is unusable: ${err.message}`
          : (err as Error).message.replace(/; retrying after .*$/, '')
      ).slice(0, MAX_ERROR);
      // Asked again after an hour, or the CA's own Retry-After on a rate limit; never sooner.
      const wait = nextCheckDelay(err instanceof AcmeRateLimitError ? err.retryAfterMs : undefined, seed, ARI_POLL.afterErrorMs);
      if (c.status?.acme?.ari?.lastError !== message) ctx.recorder.warning(c, 'ARIError', `Could not get renewal information from the ACME server: ${message}`);
      await writeAri(c, ctx, { ...base, nextCheck: new Date(now + wait).toISOString(), lastError: message }, replan);
      return { requeueAfter: wait };
    } finally {
      const left = asking.get(issuerKey)! - 1;
      if (left) asking.set(issuerKey, left);
      else asking.delete(issuerKey);
      if (failed || performance.now() - started > SLOW_MS) slow.add(issuerKey);
      else slow.delete(issuerKey);
    }
    const wait = nextCheckDelay(parseRetryAfter(retryAfter, now), seed);
    const window = { start: info.window.start.toISOString(), end: info.window.end.toISOString() };
    const before = c.status?.acme?.ari?.suggestedWindow;
    if (before?.start !== window.start || before.end !== window.end) {
      ctx.recorder.normal(
        c,
        'RenewalWindow',
        `The ACME server suggests renewing between ${window.start} and ${window.end}${info.explanationURL ? ` (${info.explanationURL})` : ''}`,
      );
    }
    const { lastError: _cleared, explanationURL: _old, ...kept } = base;
    await writeAri(
      c,
      ctx,
      {
        ...kept,
        suggestedWindow: window,
        ...(info.explanationURL ? { explanationURL: info.explanationURL } : {}),
        nextCheck: new Date(now + wait).toISOString(),
      },
      replan,
    );
    return { requeueAfter: wait };
  }

  return (
    controllerFor(api.Certificate.kind)
      .withRbac(renewalInfoRbac(api))
      .named('certificate-renewal-info')
      // Asking is waiting on a CA, not computing: at 10,000 six-day certificates renewed every 20
      // minutes (bench/README.md), two workers answered 1.7 certificates a second against 8 needed.
      .withOptions({ maxConcurrentReconciles: 8 })
      .reconcile(reconcile)
  );
}
