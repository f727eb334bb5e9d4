import {
  byController,
  CONTROLLER_INDEX,
  controllerFor,
  controllerReference,
  finishing,
  parseDuration,
  rfc3339,
  type ReconcileContext,
  type Request,
  type Result,
} from '@opkit/runtime';
import type { AcmeAccounts } from '../../acme/accounts.js';
import { AcmeProblemError, AcmeUnavailableError, type AcmeSession, type acme } from '../../acme/client.js';
import { profileProblem } from '../../acme/profiles.js';
import { pickSolver } from '../../acme/solver-picker.js';
import { applySolverOverrides } from '../../acme/solver-overrides.js';
import { adler32 } from '../../acme/solver-resources.js';
import { childName } from '../../names.js';
import type { ChallengeObject } from '../../api/acme/v1/challenge.js';
import { FAILED_STATES, type OrderObject, type OrderState } from '../../api/acme/v1/order.js';
import type { CertOperatorConfig } from '../../config.js';
import { resolveIssuer } from '../../issuers/resolve.js';
import { recordedAuthorization } from '../../acme/authorizations.js';
import { isProgress } from './challenges.js';
import { isFinalChallenge } from './scheduler.js';
import { classify } from './errors.js';
import { recordFailure, RETRY_CLEARED, retryRecords, waitBeforeRetry } from './retry.js';
import { acmeRbac } from '../rbac.js';

type OrderStatus = NonNullable<OrderObject['status']>;

/** The reason of an order whose challenges are going as they should (constant: no status churn). */
const solving = (o: OrderObject) => `solving the HTTP-01 challenges for ${[...(o.spec.dnsNames ?? []), ...(o.spec.ipAddresses ?? [])].join(', ')}`;

/**
 * Whether a newOrder failed over its `replaces`: already replaced (RFC 9773 §5), or a refusal that
 * names it (Pebble's "did not request the certificate being replaced", a malformed identifier), or
 * the 500 Pebble answers for a certificate it has no order for (one issued before it restarted).
 * Not an overloaded or unreachable CA (502, 503, 504: ordering again at once would only add load,
 * and lose the renewal's exemption from rate limits), nor a refusal of the names themselves.
 */
export function refusesReplaces(err: unknown): boolean {
  if (err instanceof AcmeProblemError)
    return !err.accountGone && (err.type.endsWith(':alreadyReplaced') || /replac/i.test(err.message) || err.type.endsWith(':malformed'));
  return err instanceof AcmeUnavailableError && err.status === 500;
}

/** The order asks for a profile the CA does not offer: final, with the offered ones named. */
class ProfileRefused extends Error {}

/**
 * newOrder, in the profile it asks for (checked against the directory first, so the reason names
 * what the CA offers), naming the certificate it replaces (RFC 9773 §5) when the CA offers ARI. A CA that
 * refuses the `replaces` (already replaced by another order, a certificate of another account or
 * unknown to it) gets the same order without it, once, as cert-manager v1.21 does for the first
 * two: what a renewal gains from naming its predecessor is not worth failing the renewal over.
 */
async function newOrder(session: AcmeSession, o: OrderObject, ctx: ReconcileContext, order: Record<string, unknown>): Promise<acme.Order> {
  const directory = o.spec.replaces || o.spec.profile ? await session.directory() : {};
  const problem = profileProblem(o.spec.profile, directory.profiles);
  if (problem) throw new ProfileRefused(problem);
  const payload = o.spec.profile ? { ...order, profile: o.spec.profile } : order;
  const replaces = o.spec.replaces && directory.renewalInfo ? o.spec.replaces : undefined;
  if (!replaces) return session.call((c) => c.createOrder(payload as never));
  try {
    return await session.call((c) => c.createOrder({ ...payload, replaces } as never));
  } catch (err) {
    if (!refusesReplaces(err)) throw err;
    ctx.recorder.normal(
      o,
      'ReplacesRefused',
      `The ACME server refused to record this order as the renewal of ${replaces} (${(err as Error).message}); ordering without it`,
    );
    return session.call((c) => c.createOrder(payload as never));
  }
}

/**
 * Drives one ACME order: newOrder, its authorizations, a Challenge per authorization still to be
 * won (the solver picked by cert-manager's rules), finalize with the CSR once ready, then the
 * certificate. A refusal is final (errored, with the CA's words); a rate limit or an outage is
 * waited out and shown; an order the CA forgot (it restarted) is started over.
 */
export function orderController(cfg: CertOperatorConfig, accounts: AcmeAccounts) {
  const { Order, Challenge } = cfg.api;
  const retries = retryRecords(cfg.api);
  /**
   * The failure record (failedAttempts, lastFailureTime) is kept until the order is complete: a CA
   * that answers the new order and then loses it again (a restarting CA) waits twice as long each
   * time, instead of the count starting over with every order it accepts.
   */
  async function write(o: OrderObject, ctx: ReconcileContext, patch: Partial<OrderStatus>) {
    await ctx.updateStatus(Order.kind, o, { ...o.status, ...patch });
  }
  // The Order's Challenges, by their controller (cert-manager's are made with a controller reference
  // too): a scan of the namespace cost each reconcile 10,000 Challenges at scale.
  const challengesOf = (o: OrderObject, ctx: ReconcileContext) =>
    ctx.cache.list(Challenge.kind, { namespace: o.metadata.namespace, index: { name: CONTROLLER_INDEX, value: o.metadata.uid! } });
  const deleteChallenges = async (o: OrderObject, ctx: ReconcileContext) => {
    for (const c of await challengesOf(o, ctx)) await ctx.delete(Challenge.kind, c);
  };
  const fail = async (o: OrderObject, ctx: ReconcileContext, state: OrderState, reason: string) => {
    ctx.recorder.warning(o, 'Failed', reason);
    await write(o, ctx, { state, reason, failureTime: rfc3339(new Date(ctx.clock.now())) });
  };

  async function reconcile(req: Request, ctx: ReconcileContext): Promise<Result> {
    const o = await ctx.cache.get(Order.kind, req);
    if (!o || o.metadata.deletionTimestamp) return;
    const state = o.status?.state;
    if (state && FAILED_STATES.includes(state)) return;
    if (state === 'valid' && o.status?.certificate) return deleteChallenges(o, ctx);

    const lookup = await resolveIssuer(ctx.cache, o.spec.issuerRef, req.namespace!, cfg);
    if (!lookup.ok) return (await write(o, ctx, { reason: lookup.message }), { requeueAfter: 30_000 });
    const issuer = lookup.resolved.issuer;
    // After a transient failure, nothing goes to the CA before the recorded backoff has passed.
    const wait = waitBeforeRetry(retries.of(o), ctx.clock.now());
    if (wait) return { requeueAfter: wait };
    try {
      const session = await accounts.registered(issuer, lookup.resolved.resourceNamespace, ctx);
      const finalize = async (order: { url?: string; finalize?: string }): Promise<Result> => {
        const finalized = await session.call((c) => c.finalizeOrder(order as never, Buffer.from(o.spec.request, 'base64').toString('utf8')));
        // A CA that issues at once answers valid with the certificate's URL: fetch it now.
        if (finalized.status === 'valid' && finalized.certificate) return complete(finalized);
        await write(o, ctx, { state: finalized.status as OrderState, reason: '' });
        return { requeueAfter: 1_000 };
      };
      const complete = async (order: acme.Order): Promise<Result> => {
        const chain = await session.call((c) => c.getCertificate(order, issuer.spec.acme?.preferredChain));
        ctx.recorder.normal(o, 'Complete', 'Order completed successfully');
        await write(o, ctx, { ...retries.fields(o, RETRY_CLEARED), state: 'valid', reason: '', certificate: Buffer.from(chain).toString('base64') });
        return deleteChallenges(o, ctx);
      };
      if (!o.status?.url) {
        const identifiers = [
          ...(o.spec.dnsNames ?? []).map((value) => ({ type: 'dns', value })),
          ...(o.spec.ipAddresses ?? []).map((value) => ({ type: 'ip', value })),
        ];
        // The lifetime, as notAfter, only when the issuer asks: a CA that does not support it (Let's
        // Encrypt) refuses the whole order.
        const notAfter =
          issuer.spec.acme?.enableDurationFeature && o.spec.duration ? new Date(ctx.clock.now() + parseDuration(o.spec.duration)).toISOString() : undefined;
        const created = await newOrder(session, o, ctx, { identifiers, ...(notAfter ? { notAfter } : {}) });
        const authzs = await session.call((c) => c.getAuthorizations(created));
        await write(o, ctx, {
          url: created.url,
          finalizeURL: created.finalize,
          state: created.status as OrderState,
          reason: solving(o),
          authorizations: authzs.map(recordedAuthorization),
        });
        return;
      }

      // While challenges are being solved, everything the order needs is in the cluster: the CA is
      // asked again only once every challenge has ended (cert-manager's rule), not on every
      // Challenge status change.
      if (!state || state === 'pending') {
        const existing = await challengesOf(o, ctx);
        // The order's reason names only challenges that are held up (a failing self-check, a full
        // scheduler, an unreachable CA): normal progress is not copied, or every step of every
        // challenge would cascade into Order, CertificateRequest and Certificate status writes.
        let open = 0;
        const heldUp: string[] = [];
        for (const a of o.status.authorizations ?? []) {
          if (a.initialState === 'valid') continue; // reused authorization: nothing to solve
          const dnsName = a.identifier ?? '';
          const shown = a.wildcard ? `*.${dnsName}` : dnsName;
          const picked = pickSolver(issuer.spec.acme?.solvers ?? [], dnsName, o.metadata.labels as Record<string, string> | undefined, !!a.wildcard);
          const solver = picked && applySolverOverrides(picked, o.metadata.annotations);
          if (!solver)
            return fail(
              o,
              ctx,
              'errored',
              a.wildcard
                ? `no configured DNS-01 solver matches ${shown} (a wildcard name can only be proven with DNS-01): check the issuer's solvers`
                : `no configured solver matches ${shown}: check the issuer's solvers[].selector`,
            );
          const type = solver.dns01 ? 'dns-01' : 'http-01';
          const http = a.challenges?.find((c) => c.type === type && c.token);
          if (!http) return fail(o, ctx, 'errored', `the ACME server offers no ${type.toUpperCase()} challenge for ${shown}`);
          // The Order's Challenge for this authorization, whoever named it: one taken over in flight
          // from cert-manager carries cert-manager's name (a hash of its spec), and is carried on,
          // not made again beside a second solver.
          const ch = existing.find((c) => c.spec.authorizationURL === a.url);
          if (!ch) {
            open++;
            const name = childName(req.name, adler32(a.url));
            const key = await session.call(async (c) =>
              c.getChallengeKeyAuthorization({ type, token: http.token!, url: http.url, status: 'pending' } as never),
            );
            await ctx.create(Challenge.kind, {
              metadata: { name, namespace: req.namespace, labels: o.metadata.labels, ownerReferences: [controllerReference(Order.kind, o)] },
              spec: {
                url: http.url,
                authorizationURL: a.url,
                dnsName,
                // Only when true, as a Go client writes it (omitempty): the spec is compared whole.
                ...(a.wildcard ? { wildcard: true } : {}),
                type: solver.dns01 ? 'DNS-01' : 'HTTP-01',
                token: http.token!,
                key,
                solver,
                issuerRef: o.spec.issuerRef,
              },
            } as ChallengeObject);
            ctx.recorder.normal(o, 'Created', `Created Challenge resource "${name}" for domain "${dnsName}"`);
            continue;
          }
          const cs = ch.status?.state;
          if (cs && FAILED_STATES.includes(cs)) return fail(o, ctx, cs as OrderState, `challenge for ${dnsName} failed: ${ch.status?.reason ?? cs}`);
          if (cs === 'valid') continue;
          open++;
          if (!isProgress(ch.status?.reason)) heldUp.push(`${dnsName}: ${ch.status!.reason}`);
        }
        if (open) return write(o, ctx, { state: 'pending', reason: heldUp.length ? heldUp.join('; ') : solving(o) });
        // Every authorization is valid, which makes the order ready (RFC 8555 §7.1.6): finalize at
        // once instead of asking first, one round trip less per certificate. A CA that disagrees
        // (an order already finalized before a restart, a CA that lags) answers orderNotReady, and
        // the order is looked at below.
        if (o.status.finalizeURL) {
          try {
            return await finalize({ url: o.status.url, finalize: o.status.finalizeURL });
          } catch (err) {
            if (!(err instanceof AcmeProblemError && err.type.endsWith(':orderNotReady'))) throw err;
          }
        }
      }

      const current = await session.call((c) => c.getOrder({ url: o.status!.url } as never));
      const acmeState = current.status as OrderState;
      if (acmeState === 'invalid') return fail(o, ctx, 'invalid', 'the ACME server marked the order invalid');
      if (acmeState === 'valid') return complete(current);
      if (acmeState === 'ready') return await finalize(current);
      if (acmeState === 'processing')
        return (await write(o, ctx, { state: 'processing', reason: 'the ACME server is issuing the certificate' }), { requeueAfter: 2_000 });
      // Every challenge won, but the CA has not caught up yet: look again shortly (cert-manager: 5 s).
      await write(o, ctx, { state: 'pending', reason: 'every challenge is valid; waiting for the ACME server to mark the order ready' });
      return { requeueAfter: 5_000 };
    } catch (err) {
      if (err instanceof ProfileRefused) return fail(o, ctx, 'errored', err.message);
      const f = classify(err);
      if (f.kind === 'wait') return (await write(o, ctx, { reason: f.message }), { requeueAfter: f.requeueAfter });
      if (f.kind === 'account-lost') {
        await accounts.forget(issuer, ctx);
        return (await write(o, ctx, { reason: f.message }), { requeueAfter: 5_000 });
      }
      if (f.kind === 'retry') {
        const failed = recordFailure(retries.of(o), ctx.clock.now(), f.message, f.atLeastMs);
        return (await write(o, ctx, { ...retries.fields(o, failed.fields), reason: failed.message }), { requeueAfter: failed.requeueAfter });
      }
      if (f.kind === 'not-found') {
        // The CA forgot the order (it expired, or the CA restarted): order again from scratch, after the backoff.
        const failed = recordFailure(retries.of(o), ctx.clock.now(), `the ACME server lost the order (${f.message}); ordering again`);
        await deleteChallenges(o, ctx);
        await write(o, ctx, {
          ...retries.fields(o, failed.fields),
          url: undefined,
          finalizeURL: undefined,
          authorizations: undefined,
          state: 'pending',
          reason: failed.message,
        });
        return { requeueAfter: failed.requeueAfter };
      }
      return fail(o, ctx, 'errored', f.message);
    }
  }

  return (
    controllerFor(Order.kind)
      .withRbac(acmeRbac(cfg.api))
      .named('order')
      .owns(Challenge.kind, { priority: finishing(isFinalChallenge) })
      .withIndex(Challenge.kind, CONTROLLER_INDEX, byController)
      // An Order's reconcile waits on the CA: at 10,000 certificates four workers kept 2,700 Orders
      // queued while the operator's CPU was half idle (bench/README.md, "Short lifetimes at 10,000").
      .withOptions({ maxConcurrentReconciles: 8 })
      .reconcile(reconcile)
  );
}
