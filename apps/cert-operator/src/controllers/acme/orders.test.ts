import { describe, expect, it } from 'vitest';
import { AcmeProblemError, AcmeRateLimitError, AcmeUnavailableError } from '../../acme/client.js';
import { refusesReplaces } from './orders.js';

describe('refusesReplaces: when a renewal is ordered again without naming what it replaces', () => {
  const problem = (type: string, status: number, detail: string) => new AcmeProblemError(`urn:ietf:params:acme:error:${type}`, status, detail);
  it.each<[string, unknown, boolean]>([
    ['already replaced (RFC 9773)', problem('alreadyReplaced', 409, 'certificate already has a replacement order'), true],
    [
      "another account's certificate (Pebble's words)",
      problem('unauthorized', 403, 'requester account did not request the certificate being replaced by this order'),
      true,
    ],
    ['a malformed identifier', problem('malformed', 400, 'parsing ARI CertID failed'), true],
    ["Pebble's 500 for a certificate it has no order for", new AcmeUnavailableError('https://ca', '500: could not find an order', 500), true],
    ['an overloaded CA (503)', new AcmeUnavailableError('https://ca', '503: busy', 503), false],
    ['a gateway timeout (504)', new AcmeUnavailableError('https://ca', '504: timeout', 504), false],
    ['an unreachable CA', new AcmeUnavailableError('https://ca', 'ECONNREFUSED'), false],
    ['a rate limit', new AcmeRateLimitError(60_000, 'too many'), false],
    ['a refused name (CAA)', problem('caa', 403, 'CAA record forbids issuance'), false],
    ['a lost account', problem('accountDoesNotExist', 400, 'account does not exist'), false],
  ])('%s → %s', (_name, err, want) => {
    expect(refusesReplaces(err)).toBe(want);
  });
});
