import type { AcmeAccounts } from '../../acme/accounts.js';
import type { ReadinessCheck } from '../issuers/controller.js';
import { classify, resetBackoff } from './errors.js';

/**
 * An ACME issuer is Ready once its account is registered. The account URL is recorded on the
 * issuer and reused: no call to the server while the key, server and email stay the same.
 */
export function acmeReadiness(accounts: AcmeAccounts): ReadinessCheck {
  return async (issuer, resourceNamespace, ctx) => {
    const spec = issuer.spec.acme!;
    const key = `issuer/${issuer.metadata.uid}`;
    try {
      const { session, registered, keyHash } = await accounts.session(issuer, resourceNamespace, ctx);
      const emailUnchanged = (issuer.status?.acme?.lastRegisteredEmail ?? '') === (spec.email ?? '');
      if (registered && emailUnchanged) return { status: 'True', reason: 'ACMEAccountRegistered', message: 'The ACME account was registered with the ACME server' };
      await session.call((c) => c.createAccount({ termsOfServiceAgreed: true, contact: spec.email ? [`mailto:${spec.email}`] : [] }));
      resetBackoff(key);
      ctx.recorder.normal(issuer, 'ACMEAccountRegistered', `Registered ACME account ${session.client.getAccountUrl()}`);
      return {
        status: 'True',
        reason: 'ACMEAccountRegistered',
        message: 'The ACME account was registered with the ACME server',
        statusPatch: { acme: { uri: session.client.getAccountUrl(), lastRegisteredEmail: spec.email ?? '', lastPrivateKeyHash: keyHash } },
      };
    } catch (err) {
      const f = classify(err, key);
      return { status: 'False', reason: 'ErrRegisterACMEAccount', message: `Failed to register ACME account: ${f.message}`, requeueAfter: f.kind === 'retry' ? f.requeueAfter : 300_000 };
    }
  };
}
