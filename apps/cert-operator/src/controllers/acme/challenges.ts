import {
  ApiError,
  controllerFor,
  Ingress,
  Pod,
  parseDuration,
  rfc3339,
  Service,
  type Cached,
  type KubeObject,
  type ObjectOf,
  type ReconcileContext,
  type Request,
  type Result,
} from '@opkit/runtime';
import type { AcmeAccounts } from '../../acme/accounts.js';
import { acceptChallenge, readChallenge } from '../../acme/accept.js';
import { selfCheck } from '../../acme/self-check.js';
import {
  CHALLENGE_PATH,
  challengeRule,
  HTTPRoute,
  identityLabels,
  solverHTTPRoute,
  solverIngress,
  solverPod,
  solverService,
  solverInformer,
} from '../../acme/solver-resources.js';
import type { ChallengeObject } from '../../api/acme/v1/challenge.js';
import type { CertOperatorConfig } from '../../config.js';
import { resolveIssuer } from '../../issuers/resolve.js';
import { SecretReader } from '../../secrets/secret-reader.js';
import { changeDns01Record, checkDns01 } from './dns01.js';
import { classify } from './errors.js';
import { recordFailure, RETRY_CLEARED, retryRecords, waitBeforeRetry, type RetryState } from './retry.js';
import { ChallengeScheduler, isFinalChallenge } from './scheduler.js';

type Status = NonNullable<ChallengeObject['status']>;

/**
 * The cluster refused a solver object: an admission policy or webhook (ingress-nginx's path-type
 * rule), validation, or RBAC. Said on the Challenge, whence up to the Certificate, while the
 * self-check timeout runs; anything else (the API server away) is retried by the runtime.
 */
class SolverRefused extends Error {}
const refused =
  (what: string) =>
  (err: unknown): never => {
    if (err instanceof ApiError && [400, 403, 422].includes(err.status)) {
      // Without the request line and the generated name, so the reason is the same on every pass.
      const why = err.message.replace(/^[A-Z]+ \S+: /, '').replace(/^\S+ "[^"]*" is (forbidden|invalid): /, '');
      throw new SolverRefused(`could not create ${what}: ${why}`);
    }
    throw err;
  };

/** Reasons of a challenge going as it should; anything else means it is held up, and says why. */
export const PROGRESS = {
  scheduled: 'scheduled',
  accepted: 'self-check passed; the ACME server is validating',
  valid: 'Successfully authorized domain',
} as const;
export const isProgress = (reason: string | undefined) => !reason || Object.values(PROGRESS).includes(reason as never);
const DOMAIN_INDEX = 'spec.dnsName';

/**
 * One challenge: admitted by the scheduler; presented (HTTP-01: its solver pod, Service and Ingress
 * or HTTPRoute, recreated if deleted; DNS-01: a TXT record added by RFC 2136); the self-check
 * (through the real route, or against the zone's servers), repeated and bounded by a timeout with
 * a readable reason; accepted; the authorization polled until the CA decides; cleaned up when it ends.
 */
export function challengeController(cfg: CertOperatorConfig, accounts: AcmeAccounts) {
  const { Challenge, challengeFinalizer } = cfg.api;
  const solvers = solverInformer(cfg.api);
  const scheduler = new ChallengeScheduler(cfg.maxConcurrentChallenges);
  const passes = new Map<string, number>();
  const sc = cfg.selfCheck;

  const retries = retryRecords(cfg.api);
  /** Any write but a failure's clears the failure record (see retry.ts). */
  const write = async (ch: ChallengeObject, ctx: ReconcileContext, patch: Partial<Status>, retry: RetryState = RETRY_CLEARED): Promise<void> => {
    await ctx.updateStatus(Challenge.kind, ch, { ...ch.status, ...retries.fields(ch, retry), ...patch });
  };

  /**
   * The timeout of presenting, counted from `since` (the first attempt): past it the challenge ends
   * errored, `what` naming what did not happen in time. (Past the same timeout, a self-check that
   * has not passed hands the decision to the CA instead: below.)
   */
  const timedOut = async (ch: ChallengeObject, ctx: ReconcileContext, since: string, what: string, why: string): Promise<boolean> => {
    if (ctx.clock.now() - Date.parse(since) <= sc.timeoutMs) return false;
    const reason = `${what} within ${Math.round(sc.timeoutMs / 1000)}s: ${why}`;
    ctx.recorder.warning(ch, 'Failed', reason);
    await write(ch, ctx, { state: 'errored', reason });
    return true;
  };

  const owned = async <T extends KubeObject>(kind: Parameters<ReconcileContext['cache']['list']>[0], ch: ChallengeObject, ctx: ReconcileContext) =>
    ((await ctx.cache.list(kind, { namespace: ch.metadata.namespace, labelSelector: identityLabels(cfg.api, ch) }, solvers)) as unknown as Cached<T>[]).filter(
      (o) => o.metadata.ownerReferences?.some((r) => r.uid === ch.metadata.uid),
    );

  /** Exactly one of each; none means create, several means delete all and retry (as cert-manager). */
  async function ensureOne<T extends KubeObject>(
    kind: Parameters<ReconcileContext['create']>[0],
    existing: Cached<T>[],
    desired: () => T,
    ctx: ReconcileContext,
  ): Promise<{ obj: Cached<T>; created: boolean }> {
    const [only, ...more] = existing;
    if (only && !more.length) return { obj: only, created: false };
    for (const o of existing) await ctx.delete(kind, o);
    if (existing.length > 1) throw new Error(`found ${existing.length} solver ${kind.kind}s for one challenge; deleted them to recreate one`);
    const obj = (await ctx.create(kind, desired()).catch(refused(`the solver's ${kind.kind}`))) as unknown as Cached<T>;
    return { obj, created: true };
  }

  /** The solver pod, Service and route; true if anything had to be (re)created. */
  async function present(ch: ChallengeObject, ctx: ReconcileContext): Promise<boolean> {
    // A pod that ended (Completed, Failed, or Unknown after a node reboot) cannot answer: replace it.
    const pods = await owned<ObjectOf<typeof Pod>>(Pod, ch, ctx);
    for (const p of pods.filter((p) => ['Succeeded', 'Failed', 'Unknown'].includes(p.status?.phase ?? ''))) await ctx.delete(Pod, p);
    const live = pods.filter((p) => !['Succeeded', 'Failed', 'Unknown'].includes(p.status?.phase ?? ''));
    const pod = await ensureOne(Pod, live, () => solverPod(cfg.api, ch, cfg.acmeSolverImage), ctx);
    const svc = await ensureOne(Service, await owned(Service, ch, ctx), () => solverService(cfg.api, ch), ctx);
    const svcName = svc.obj.metadata.name;
    const http01 = ch.spec.solver.http01 ?? {};
    let route = false;
    if (http01.gatewayHTTPRoute) {
      const routes = await owned<KubeObject & { spec?: { rules?: { backendRefs?: { name: string }[] }[] } }>(HTTPRoute, ch, ctx);
      const stale = routes.filter((r) => r.spec?.rules?.[0]?.backendRefs?.[0]?.name !== svcName);
      for (const r of stale) await ctx.delete(HTTPRoute, r);
      route = (
        await ensureOne(
          HTTPRoute,
          routes.filter((r) => !stale.includes(r)),
          () => solverHTTPRoute(cfg.api, ch, svcName) as never,
          ctx,
        )
      ).created;
    } else if (http01.ingress?.name) {
      route = await editIngressInPlace(ch, http01.ingress.name, svcName, ctx);
    } else {
      const ings = await owned<ObjectOf<typeof Ingress>>(Ingress, ch, ctx);
      const stale = ings.filter((i) => i.spec?.rules?.[0]?.http?.paths[0]?.backend.service?.name !== svcName);
      for (const i of stale) await ctx.delete(Ingress, i);
      route = (
        await ensureOne(
          Ingress,
          ings.filter((i) => !stale.includes(i)),
          () => solverIngress(cfg.api, ch, svcName),
          ctx,
        )
      ).created;
    }
    return pod.created || svc.created || route;
  }

  /** `ingress.name`: add this challenge's path to the user's Ingress (and take it out afterwards). */
  async function editIngressInPlace(ch: ChallengeObject, name: string, svcName: string, ctx: ReconcileContext): Promise<boolean> {
    const ing = await ctx.client.get(Ingress, { namespace: ch.metadata.namespace, name });
    const rule = challengeRule(ch, svcName);
    const rules = ing.spec?.rules ?? [];
    const i = rules.findIndex((r) => (r.host ?? '') === (rule.host ?? ''));
    const path = rule.http.paths[0]!; // challengeRule routes exactly one path
    const existing = rules[i];
    if (existing?.http?.paths.some((p) => p.path === path.path && p.backend.service?.name === svcName)) return false;
    const patch = !existing
      ? [{ op: 'add', path: '/spec/rules/-', value: rule }]
      : existing.http
        ? [{ op: 'add', path: `/spec/rules/${i}/http/paths/-`, value: path }]
        : [{ op: 'add', path: `/spec/rules/${i}/http`, value: rule.http }];
    await ctx
      .patch(
        Ingress,
        { namespace: ch.metadata.namespace, name },
        [
          { op: 'test', path: '/metadata/resourceVersion', value: ing.metadata.resourceVersion },
          ...(ing.spec?.rules ? [] : [{ op: 'add', path: '/spec/rules', value: [] }]),
          ...patch,
        ],
        'json',
      )
      .catch(refused(`the edit of Ingress ${name}`));
    return true;
  }

  async function cleanup(ch: ChallengeObject, ctx: ReconcileContext) {
    if (ch.spec.solver.dns01) {
      const lookup = await resolveIssuer(ctx.cache, ch.spec.issuerRef, ch.metadata.namespace, cfg);
      const issuer = lookup.ok ? lookup.resolved : { kind: 'Issuer' as const, resourceNamespace: ch.metadata.namespace };
      await changeDns01Record('CleanUp', ch, new SecretReader(ctx.cache, ctx.client, cfg.api.labelled), ctx, issuer, cfg.dns01);
      return;
    }
    for (const kind of [Pod, Service, Ingress, ...(cfg.enableGatewayAPI ? [HTTPRoute] : [])] as const) {
      for (const o of await owned(kind as typeof Pod, ch, ctx)) await ctx.delete(kind as typeof Pod, o as ObjectOf<typeof Pod>);
    }
    const named = ch.spec.solver.http01?.ingress?.name;
    if (named) {
      const ing = await ctx.client.find(Ingress, { namespace: ch.metadata.namespace, name: named });
      const target = `${CHALLENGE_PATH}${ch.spec.token}`;
      const ops = (ing?.spec?.rules ?? []).flatMap((r, i) =>
        (r.http?.paths ?? [])
          .map((p, j) => ({ p, j }))
          .filter(({ p }) => p.path === target)
          .reverse()
          .map(({ j }) => ({ op: 'remove', path: `/spec/rules/${i}/http/paths/${j}` })),
      );
      if (ops.length) await ctx.patch(Ingress, { namespace: ch.metadata.namespace, name: named }, ops, 'json');
    }
  }

  async function reconcile(req: Request, ctx: ReconcileContext): Promise<Result> {
    const cached = await ctx.cache.get(Challenge.kind, req);
    if (!cached) return scheduler.release(req);
    // Only an edited Ingress needs explicit cleanup; everything else goes with owner references, so
    // an uninstalled operator never leaves Challenges stuck behind a finalizer. A challenge that
    // ended is cleaned up at once, without waiting for its deletion.
    const ending = !!cached.metadata.deletionTimestamp || isFinalChallenge(cached);
    const fin = await ctx.finalize(Challenge.kind, cached, {
      finalizer: challengeFinalizer,
      // An edited Ingress and a DNS record live outside what owner references clean up.
      needed: !!cached.spec.solver.http01?.ingress?.name || !!cached.spec.solver.dns01,
      done: ending,
      cleanup: () => cleanup(cached, ctx),
    });
    if (ending) {
      scheduler.release(req);
      passes.delete(cached.metadata.uid!);
      return;
    }
    const ch = fin.obj;

    if (!ch.status?.processing) {
      const verdict = scheduler.admit(ch, await ctx.cache.list(Challenge.kind));
      if (!verdict.ok) return (await write(ch, ctx, { reason: verdict.reason }), { requeueAfter: 5_000 });
      await write(ch, ctx, { processing: true, reason: PROGRESS.scheduled });
      return;
    }
    scheduler.release(req);

    const lookup = await resolveIssuer(ctx.cache, ch.spec.issuerRef, req.namespace!, cfg);
    if (!lookup.ok) return (await write(ch, ctx, { reason: lookup.message }), { requeueAfter: 30_000 });
    // After a transient failure, nothing goes to the CA before the recorded backoff has passed.
    const wait = waitBeforeRetry(retries.of(ch), ctx.clock.now());
    if (wait) return { requeueAfter: wait };
    // What a pass learns on its way (the CA's state; that the challenge is presented, and since
    // when) goes out with the pass's first status write, as in cert-manager's sync: a write per
    // step cost each challenge two more requests and watch events (six status writes, now four).
    // A failure's write carries it too: a solver presented before the CA failed stays presented,
    // its self-check timeout counted from then.
    const learned: Partial<Status> = {};
    const current = (): Status => ({ ...ch.status, ...learned });
    const save = (patch: Partial<Status> = {}, retry?: RetryState) => write(ch, ctx, { ...learned, ...patch }, retry);
    /** Before a pass ends without a write of its own: what it learned still goes out. */
    const saveLearned = async () => {
      if (Object.keys(learned).length) await save();
    };
    try {
      const session = await accounts.registered(lookup.resolved.issuer, lookup.resolved.resourceNamespace, ctx);
      const atCa = { url: ch.spec.url, authorizationURL: ch.spec.authorizationURL, token: ch.spec.token };
      if (!ch.status.state) learned.state = (await readChallenge(session, atCa)).state;
      // Presented by another controller (cert-manager's, taken over in flight), which keeps no
      // presentedAt: the self-check's timeout counts from the takeover.
      if (ch.status.presented && !ch.status.presentedAt) learned.presentedAt = rfc3339(new Date(ctx.clock.now()));
      const dns = !!ch.spec.solver.dns01;
      const mechanism = dns ? 'DNS-01' : 'HTTP-01';
      if (dns) {
        // A DNS record is added once (adding it again would change nothing).
        if (!current().presented) {
          const where = await changeDns01Record('Present', ch, new SecretReader(ctx.cache, ctx.client, cfg.api.labelled), ctx, lookup.resolved, cfg.dns01);
          ctx.recorder.normal(ch, 'Presented', `Presented challenge using DNS-01 challenge mechanism: TXT record ${where}`);
          Object.assign(learned, { presented: true, presentedAt: rfc3339(new Date(ctx.clock.now())) });
        }
      } else {
        // Present on every pass: a deleted or dead solver is recreated while the challenge is pending.
        let recreated: boolean;
        try {
          recreated = await present(ch, ctx);
        } catch (err) {
          if (!(err instanceof SolverRefused)) throw err;
          // The timeout runs from the first refusal: one that lasts ends the challenge, as a
          // self-check that never passes does.
          const since = current().presentedAt ?? rfc3339(new Date(ctx.clock.now()));
          if (await timedOut(ch, ctx, since, 'the solver was not presented', err.message)) return;
          if (ch.status.reason !== err.message) ctx.recorder.warning(ch, 'PresentError', err.message);
          await save({ reason: err.message, presentedAt: since });
          return { requeueAfter: sc.intervalMs };
        }
        if (!current().presented) {
          ctx.recorder.normal(ch, 'Presented', `Presented challenge using HTTP-01 challenge mechanism`);
          Object.assign(learned, { presented: true, presentedAt: rfc3339(new Date(ctx.clock.now())) });
        }
        if (recreated) ctx.recorder.normal(ch, 'Presented', 'Recreated solver resources that had disappeared');
      }

      if (current().state === 'pending') {
        const askCA = async (reason: string): Promise<Result> => {
          await acceptChallenge(session, atCa);
          return (await save({ state: 'processing', reason }), { requeueAfter: 1_000 });
        };
        const sincePresented = ctx.clock.now() - Date.parse(current().presentedAt!);
        // waitInsteadOfSelfCheck: no self-check at all (a cluster that cannot see itself as the CA
        // does), for either challenge type, as cert-manager; the http01 one is our older place.
        const waitInstead = ch.spec.solver.waitInsteadOfSelfCheck ?? (!dns ? ch.spec.solver.http01?.waitInsteadOfSelfCheck : undefined);
        if (waitInstead) {
          const left = parseDuration(waitInstead) - sincePresented;
          const reason = `Waiting ${waitInstead} after presenting, instead of a self-check (waitInsteadOfSelfCheck)`;
          if (left > 0) {
            if (ch.status.reason !== reason || Object.keys(learned).length) await save({ reason });
            return { requeueAfter: left };
          }
          return askCA(`${PROGRESS.accepted} (waited ${waitInstead} instead of a self-check)`);
        }
        const problem = dns
          ? await checkDns01(ch, cfg.dns01)
          : await selfCheck(ch.spec.dnsName, ch.spec.token, ch.spec.key, { nameservers: cfg.selfCheckNameservers, port: cfg.selfCheckPort });
        const uid = ch.metadata.uid!;
        if (problem) {
          passes.set(uid, 0);
          // Past the timeout the CA decides, not the self-check: it may reach what this cluster
          // cannot (hairpin NAT, split-horizon DNS), and a route that really is broken fails there
          // with the CA's own reason. A self-check that times out is never a failure by itself.
          if (sincePresented > sc.timeoutMs) {
            const reason = `self-check did not pass within ${Math.round(sc.timeoutMs / 1000)}s (${problem}): asked the ACME server to validate anyway`;
            ctx.recorder.warning(ch, 'SelfCheckTimedOut', reason);
            return askCA(reason);
          }
          await save({ reason: `Waiting for ${mechanism} challenge propagation: ${problem}` });
          return { requeueAfter: dns ? cfg.dns01.checkIntervalMs : sc.intervalMs };
        }
        // HTTP-01 passes several times in a row (a load balancer may still route some requests
        // elsewhere); every authoritative server answering is DNS-01's whole check.
        const n = (passes.get(uid) ?? 0) + 1;
        passes.set(uid, n);
        if (!dns && n < sc.requiredPasses) {
          await saveLearned();
          return { requeueAfter: sc.intervalMs };
        }
        return askCA(PROGRESS.accepted);
      }

      // Accepted: wait for the CA's verdict.
      const verdict = await readChallenge(session, atCa);
      if (verdict.state === 'valid') {
        ctx.recorder.normal(ch, 'DomainVerified', `Domain verified with ${mechanism}`);
        return save({ state: 'valid', reason: PROGRESS.valid });
      }
      if (verdict.state === 'invalid') {
        const reason = `the ACME server rejected the challenge: ${verdict.detail ?? 'invalid'}`;
        ctx.recorder.warning(ch, 'Failed', reason);
        return save({ state: 'invalid', reason });
      }
      await saveLearned();
      return { requeueAfter: 2_000 };
    } catch (err) {
      const f = classify(err);
      if (f.kind === 'wait') return (await save({ reason: f.message }), { requeueAfter: f.requeueAfter });
      if (f.kind === 'retry') {
        const failed = recordFailure(retries.of(ch), ctx.clock.now(), f.message, f.atLeastMs);
        return (await save({ reason: failed.message }, failed.fields), { requeueAfter: failed.requeueAfter });
      }
      if (f.kind === 'account-lost') {
        await accounts.forget(lookup.resolved.issuer, ctx);
        return (await save({ reason: f.message }), { requeueAfter: 5_000 });
      }
      const state = f.kind === 'not-found' ? 'expired' : 'errored';
      ctx.recorder.warning(ch, 'Failed', f.message);
      return save({ state: state as Status['state'], reason: f.message });
    }
  }

  const sameDomain = async (c: ChallengeObject, { cache }: { cache: ReconcileContext['cache'] }) =>
    (await cache.list(Challenge.kind, { index: { name: DOMAIN_INDEX, value: c.spec.dnsName } }))
      .filter((o) => o.metadata.uid !== c.metadata.uid && !o.status?.processing)
      .map((o) => ({ namespace: o.metadata.namespace, name: o.metadata.name }));

  let builder = controllerFor(Challenge.kind)
    .named('challenge')
    .withIndex(Challenge.kind, DOMAIN_INDEX, (c) => [c.spec.dnsName])
    // When a challenge ends, the next one waiting for its domain can go.
    .watches(Challenge.kind, sameDomain, { predicates: [{ create: () => false, update: (_o, n) => isFinalChallenge(n), delete: () => true }] })
    .owns(Pod, { informer: solvers })
    .owns(Service, { informer: solvers })
    .owns(Ingress, { informer: solvers });
  if (cfg.enableGatewayAPI) builder = builder.owns(HTTPRoute, { informer: solvers });
  return builder.withOptions({ maxConcurrentReconciles: 8 }).reconcile(reconcile);
}
