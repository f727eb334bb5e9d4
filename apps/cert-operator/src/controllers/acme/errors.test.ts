import { describe, expect, it } from 'vitest';
import { AccountNotReadyError } from '../../acme/accounts.js';
import { AcmeProblemError, AcmeProtocolError, AcmeRateLimitError, AcmeUnavailableError } from '../../acme/client.js';
import { DnsError } from '../../dns/client.js';
import { classify } from './errors.js';

describe('classify: what an ACME or DNS failure does to the object', () => {
  it.each([
    { name: 'rate limited: retried no sooner than Retry-After', err: new AcmeRateLimitError(120_000, 'too many'), want: { kind: 'retry', atLeastMs: 120_000 } },
    { name: 'unreachable: retried after the backoff', err: new AcmeUnavailableError('https://ca', 'ECONNREFUSED'), want: { kind: 'retry' } },
    // Found by the hostile-tenant test: this one was thrown, so the Issuer said nothing.
    {
      name: 'an answer that is not ACME: named on the object and retried',
      err: new AcmeProtocolError('https://ca', 'it named a URL that is not one'),
      want: { kind: 'retry' },
    },
    { name: 'the account key not ready yet: waited for', err: new AccountNotReadyError('not yet'), want: { kind: 'wait', requeueAfter: 5_000 } },
    { name: "a DNS server's refusal: retried after the backoff", err: new DnsError('NOTAUTH'), want: { kind: 'retry', message: 'DNS-01: NOTAUTH' } },
    { name: 'a problem document: final', err: new AcmeProblemError('urn:ietf:params:acme:error:rejectedIdentifier', 400, 'no'), want: { kind: 'final' } },
  ])('$name', ({ err, want }) => {
    expect(classify(err)).toMatchObject(want);
  });

  it('throws what it does not know (a bug of ours, for the reconcile to report)', () => {
    expect(() => classify(new TypeError('x is undefined'))).toThrow(TypeError);
  });
});
