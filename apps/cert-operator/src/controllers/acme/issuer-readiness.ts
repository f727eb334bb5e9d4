import type { AcmeAccounts } from '../../acme/accounts.js';
import { profileProblem } from '../../acme/profiles.js';
import { solverProblems } from '../../acme/solver-picker.js';
import type { ReadinessCheck } from '../issuers/controller.js';
import { classify } from './errors.js';
import { recordFailure, RETRY_CLEARED, waitBeforeRetry, type RetryRecords } from './retry.js';

const REGISTERED = { status: 'True', reason: 'ACMEAccountRegistered', message: 'The ACME account was registered with the ACME server' } as const;

/**
 * An ACME issuer is Ready once its account is registered. The account URL is recorded on the
 * issuer and reused: no call to the server while the key, server and email stay the same. A failed
 * registration is retried after the backoff recorded on the issuer; a spec change retries at once.
 */
export function acmeReadiness(accounts: AcmeAccounts, retries: RetryRecords): ReadinessCheck {
  return async (issuer, resourceNamespace, ctx) => {
    const spec = issuer.spec.acme!;
    // A solver that cannot be used (a DNS-01 provider not implemented here) is said, not skipped.
    const problems = solverProblems(spec.solvers ?? []);
    if (problems.length) return { status: 'False', reason: 'InvalidSolver', message: problems.join('; ') };
    const now = ctx.clock.now();
    const ready = issuer.status?.conditions?.find((c) => c.type === 'Ready');
    // Waiting out the backoff: the verdict stays what it is (so nothing is written), until then.
    const wait = ready?.observedGeneration === issuer.metadata.generation ? waitBeforeRetry(retries.of(issuer), now) : undefined;
    if (wait && ready?.status === 'False') return { status: 'False', reason: ready.reason, message: ready.message, requeueAfter: wait };
    try {
      const { session, registered, keyHash } = await accounts.session(issuer, resourceNamespace, ctx);
      // A profile the CA does not offer would fail every order: said on the issuer, with what it
      // offers. A directory that cannot be read just now leaves it to the order, which checks
      // again: a CA's blip must not make a registered issuer unready (and hold every Certificate).
      const offered = spec.profile
        ? await session.directory().then(
            (d) => d.profiles,
            () => 'unknown' as const,
          )
        : undefined;
      const unknownProfile = offered !== undefined && offered !== 'unknown' ? profileProblem(spec.profile, offered) : undefined;
      if (unknownProfile) return { status: 'False', reason: 'UnknownProfile', message: `acme.profile: ${unknownProfile}`, requeueAfter: 600_000 };
      const emailUnchanged = (issuer.status?.acme?.lastRegisteredEmail ?? '') === (spec.email ?? '');
      if (registered && emailUnchanged) return { ...REGISTERED, statusPatch: retries.fields(issuer, RETRY_CLEARED) };
      await session.call((c) => c.createAccount({ termsOfServiceAgreed: true, contact: spec.email ? [`mailto:${spec.email}`] : [] }));
      ctx.recorder.normal(issuer, 'ACMEAccountRegistered', `Registered ACME account ${session.client.getAccountUrl()}`);
      return {
        ...REGISTERED,
        statusPatch: {
          ...retries.fields(issuer, RETRY_CLEARED),
          acme: { uri: session.client.getAccountUrl(), lastRegisteredEmail: spec.email ?? '', lastPrivateKeyHash: keyHash },
        },
      };
    } catch (err) {
      const f = classify(err);
      if (f.kind === 'wait')
        return { status: 'False', reason: 'ErrRegisterACMEAccount', message: `Failed to register ACME account: ${f.message}`, requeueAfter: f.requeueAfter };
      const failed = recordFailure(retries.of(issuer), now, `Failed to register ACME account: ${f.message}`, f.kind === 'retry' ? f.atLeastMs : 0);
      return {
        status: 'False',
        reason: 'ErrRegisterACMEAccount',
        message: failed.message,
        statusPatch: retries.fields(issuer, failed.fields),
        requeueAfter: failed.requeueAfter,
      };
    }
  };
}
