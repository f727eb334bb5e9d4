import { describe, expect, it } from 'vitest';
import { recordedAuthorization, type CaAuthorization } from './authorizations.js';

const authz = (challenges: CaAuthorization['challenges'], extra: Partial<CaAuthorization> = {}): CaAuthorization => ({
  url: 'https://ca.test/authz/1',
  status: 'pending',
  identifier: { value: 'shop.example.com' },
  challenges,
  ...extra,
});

describe('recordedAuthorization', () => {
  it('records the identifier, wildcard and initial state as the CA gave them', () => {
    expect(recordedAuthorization(authz([], { wildcard: true, status: 'valid' }))).toEqual({
      url: 'https://ca.test/authz/1',
      identifier: 'shop.example.com',
      wildcard: true,
      initialState: 'valid',
      challenges: [],
    });
  });

  it.each([
    ['http-01 with its token', { url: 'https://ca.test/chal/1', type: 'http-01', token: 't1' }, true],
    ['dns-01 with its token', { url: 'https://ca.test/chal/2', type: 'dns-01', token: 't2' }, true],
    ['tls-alpn-01 with its token', { url: 'https://ca.test/chal/3', type: 'tls-alpn-01', token: 't3' }, true],
    // Pebble v2.10 offers it for every name: no token, an account URI and issuer names instead.
    ['dns-persist-01 (no token)', { url: 'https://ca.test/chal/4', type: 'dns-persist-01', accounturi: 'https://ca.test/acct/1' }, false],
    ['an empty token', { url: 'https://ca.test/chal/5', type: 'http-01', token: '' }, false],
    ['a token that is not a string', { url: 'https://ca.test/chal/6', type: 'http-01', token: 7 }, false],
    ['no URL', { type: 'http-01', token: 't7' }, false],
    ['no type', { url: 'https://ca.test/chal/8', token: 't8' }, false],
  ])('%s: recorded %s', (_, challenge, recorded) => {
    expect(recordedAuthorization(authz([challenge])).challenges).toHaveLength(recorded ? 1 : 0);
  });

  it('keeps the solvable challenges of an authorization that also offers one without a token, in the order given', () => {
    const got = recordedAuthorization(
      authz([
        { url: 'u1', type: 'dns-persist-01' },
        { url: 'u2', type: 'http-01', token: 'a' },
        { url: 'u3', type: 'dns-01', token: 'b' },
      ]),
    );
    expect(got.challenges).toEqual([
      { url: 'u2', type: 'http-01', token: 'a' },
      { url: 'u3', type: 'dns-01', token: 'b' },
    ]);
  });

  it('records no challenges when the CA lists none', () => {
    expect(recordedAuthorization(authz(undefined)).challenges).toEqual([]);
  });
});
