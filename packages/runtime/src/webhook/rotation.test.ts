import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { certificateHosts, decideRotation, heldCertificates, trustedBy, type HeldCa, type HeldCertificates, type TargetTrust } from './rotation.js';
import { issueCa, issueServing } from './self-signed.js';

const day = 86_400_000;
const t0 = Date.UTC(2026, 0, 1);
const HOSTS = ['svc.ns.svc'];
const ca = (fingerprint: string, from = t0, o: Partial<HeldCa> = {}): HeldCa => ({
  fingerprint,
  notBefore: from,
  notAfter: from + 365 * day,
  hasKey: true,
  ...o,
});
const serving = (issuer: string | undefined, o: Partial<NonNullable<HeldCertificates['serving']>> = {}) => ({
  notBefore: t0,
  notAfter: t0 + 90 * day,
  hosts: HOSTS,
  issuer,
  ...o,
});
const trusting = (...fps: string[]): TargetTrust[] => [
  { name: 'ValidatingWebhookConfiguration op', trusts: fps },
  { name: 'CustomResourceDefinition things.op', trusts: fps },
];
const A = ca('A');
const B = ca('B', t0 + 244 * day);

describe('decideRotation', () => {
  it.each<[string, HeldCertificates, TargetTrust[], number, string, Record<string, unknown>?]>([
    ['nothing held', { cas: [] }, [], t0, 'add-ca'],
    [
      'a CA nobody trusts yet: inject it',
      { cas: [A] },
      trusting(),
      t0,
      'inject',
      { targets: ['ValidatingWebhookConfiguration op', 'CustomResourceDefinition things.op'] },
    ],
    ['a CA every caller trusts, no serving certificate: issue it', { cas: [A] }, trusting('A'), t0, 'issue-serving', { signer: 'A', hosts: HOSTS }],
    ['no targets installed (the chart has none): issue at once', { cas: [A] }, [], t0, 'issue-serving', { signer: 'A' }],
    ['both fresh', { cas: [A], serving: serving('A') }, trusting('A'), t0 + day, 'keep'],
    ['serving at two thirds', { cas: [A], serving: serving('A') }, trusting('A'), t0 + 60 * day, 'issue-serving', { signer: 'A', hosts: HOSTS }],
    ['serving expired', { cas: [A], serving: serving('A') }, trusting('A'), t0 + 91 * day, 'issue-serving'],
    ['a caBundle someone reset: inject again', { cas: [A], serving: serving('A') }, [{ name: 'x', trusts: [] }], t0, 'inject', { targets: ['x'] }],
    ["a caBundle with a stranger's CA: inject ours", { cas: [A], serving: serving('A') }, [{ name: 'x', trusts: ['A', 'Z'] }], t0, 'inject'],
    // Phase 1: the CA is past two thirds: a new one joins the bundle. The serving certificate stays.
    ['CA at two thirds', { cas: [A], serving: serving('A', { notBefore: t0 + 240 * day, notAfter: t0 + 330 * day }) }, trusting('A'), t0 + 244 * day, 'add-ca'],
    // Phase 2: the bundle holds both: the callers must learn it.
    ['a new CA in the bundle: inject both', { cas: [B, A], serving: serving('A') }, trusting('A'), t0 + 245 * day, 'inject'],
    // While the injection has not been seen on every caller, the old serving certificate stays.
    [
      'one caller still without the new CA: keep serving the old',
      { cas: [B, A], serving: serving('A') },
      [
        { name: 'CRD', trusts: ['A', 'B'] },
        { name: 'VWC', trusts: ['A'] },
      ],
      t0 + 245 * day,
      'inject',
      { targets: ['VWC'] },
    ],
    // Phase 3: every caller trusts the new CA: a certificate from it.
    [
      'every caller trusts the new CA: switch to it',
      { cas: [B, A], serving: serving('A', { notBefore: t0 + 240 * day, notAfter: t0 + 330 * day }) },
      trusting('A', 'B'),
      t0 + 245 * day,
      'issue-serving',
      { signer: 'B' },
    ],
    [
      'switched: keep until the old CA expires',
      { cas: [B, A], serving: serving('B', { notBefore: t0 + 245 * day, notAfter: t0 + 335 * day }) },
      trusting('B', 'A'),
      t0 + 246 * day,
      'keep',
    ],
    [
      'the old CA expired: prune it',
      { cas: [B, A], serving: serving('B', { notBefore: t0 + 300 * day, notAfter: t0 + 390 * day }) },
      trusting('B', 'A'),
      t0 + 366 * day,
      'prune',
      { expired: ['A'] },
    ],
    ['a CA without its key cannot sign: a new one', { cas: [ca('A', t0, { hasKey: false })] }, trusting('A'), t0, 'add-ca'],
    ['serving signed by no CA of the bundle', { cas: [A], serving: serving(undefined) }, trusting('A'), t0, 'issue-serving', { signer: 'A' }],
    ['the only CA expired', { cas: [A], serving: serving('A') }, trusting('A'), t0 + 366 * day, 'add-ca'],
  ])('%s → %s', (_, held, targets, now, action, details = {}) => {
    expect(decideRotation(held, targets, HOSTS, now)).toMatchObject({ action, ...details });
  });

  it('waits (serving what it has) when no CA with a key is trusted by every caller', () => {
    const d = decideRotation(
      { cas: [A], serving: serving(undefined) },
      [
        { name: 'x', trusts: ['A'] },
        { name: 'y', trusts: ['A'] },
      ],
      HOSTS,
      t0,
    );
    expect(d.action).toBe('issue-serving');
    // Two callers that trust different CAs: nothing can serve both; inject first.
    expect(
      decideRotation(
        { cas: [B, A], serving: serving('A') },
        [
          { name: 'x', trusts: ['B'] },
          { name: 'y', trusts: ['A'] },
        ],
        HOSTS,
        t0 + 245 * day,
      ).action,
    ).toBe('inject');
  });

  it('rechecks at the first renewal, or when a CA of the bundle expires', () => {
    expect(decideRotation({ cas: [A], serving: serving('A') }, trusting('A'), HOSTS, t0)).toEqual({ action: 'keep', recheckAt: t0 + 60 * day });
    const old = ca('O', t0 - 300 * day);
    expect(decideRotation({ cas: [A, old], serving: serving('A') }, trusting('A', 'O'), HOSTS, t0)).toEqual({ action: 'keep', recheckAt: t0 + 60 * day });
    expect(decideRotation({ cas: [A, ca('O', t0 - 320 * day)], serving: serving('A', { notAfter: t0 + 200 * day }) }, trusting('A', 'O'), HOSTS, t0)).toEqual({
      action: 'keep',
      recheckAt: t0 + 45 * day,
    });
  });

  it('converges replicas called by different names on one certificate for all of them', () => {
    // Replica 1 wants a; the certificate names a. Replica 2 wants b: it issues for both.
    const forA = serving('A', { hosts: ['a.ns.svc'] });
    expect(decideRotation({ cas: [A], serving: forA }, trusting('A'), ['b.ns.svc'], t0)).toMatchObject({
      action: 'issue-serving',
      hosts: ['a.ns.svc', 'b.ns.svc'],
    });
    // Then neither replica issues again: the certificate names what each wants.
    const forBoth = serving('A', { hosts: ['a.ns.svc', 'b.ns.svc'] });
    expect(decideRotation({ cas: [A], serving: forBoth }, trusting('A'), ['a.ns.svc'], t0).action).toBe('keep');
    expect(decideRotation({ cas: [A], serving: forBoth }, trusting('A'), ['b.ns.svc'], t0).action).toBe('keep');
    // A renewal issues for the renewer's names: a name nobody asks for any more leaves.
    expect(decideRotation({ cas: [A], serving: forBoth }, trusting('A'), ['b.ns.svc'], t0 + 61 * day)).toMatchObject({
      action: 'issue-serving',
      hosts: ['b.ns.svc'],
    });
  });

  it('compares IPv6 names as the certificate prints them (else it would reissue forever)', () => {
    expect(decideRotation({ cas: [A], serving: serving('A', { hosts: ['0:0:0:0:0:0:0:1'] }) }, trusting('A'), ['::1'], t0).action).toBe('keep');
    expect(decideRotation({ cas: [A], serving: serving('A', { hosts: ['FD00:0:0:0:0:0:0:A'] }) }, trusting('A'), ['fd00::a'], t0).action).toBe('keep');
  });
});

describe('heldCertificates', () => {
  const now = Date.now();
  const a = issueCa('a', now - day, now + 365 * day);
  const leaf = issueServing(a, ['svc.ns.svc', '127.0.0.1'], now - day, now + 90 * day);
  const fp = (pem: string) => new X509Certificate(pem).fingerprint256;

  it('reads what a Secret it wrote holds', () => {
    const held = heldCertificates({ caCert: a.cert, caKey: a.key, cert: leaf.cert, key: leaf.key });
    expect(held.cas).toEqual([{ fingerprint: fp(a.cert), hasKey: true, notBefore: expect.any(Number), notAfter: Math.floor((now + 365 * day) / 1000) * 1000 }]);
    expect(held.serving).toMatchObject({ hosts: ['svc.ns.svc', '127.0.0.1'], issuer: fp(a.cert) });
  });

  it('reads a bundle of two CAs, knows which it has keys for, and which signed the serving certificate', () => {
    const b = issueCa('b', now - day, now + 365 * day);
    const held = heldCertificates({ caCert: b.cert + a.cert, caKey: b.key, cert: leaf.cert, key: leaf.key });
    expect(held.cas.map((c) => [c.fingerprint, c.hasKey])).toEqual([
      [fp(b.cert), true],
      [fp(a.cert), false],
    ]);
    expect(held.serving?.issuer).toBe(fp(a.cert));
    expect(heldCertificates({ caCert: b.cert, caKey: b.key + a.key, cert: leaf.cert, key: leaf.key }).serving?.issuer).toBeUndefined();
  });

  it('treats garbage as missing', () => {
    expect(heldCertificates({ caCert: 'junk', caKey: 'junk', cert: 'junk', key: 'junk' })).toEqual({ cas: [] });
  });

  it('reads which CAs a caBundle holds', () => {
    expect(trustedBy(Buffer.from(a.cert + 'junk').toString('base64'))).toEqual([fp(a.cert)]);
    expect(trustedBy(undefined)).toEqual([]);
  });

  it('reads IPv6 names as the certificate prints them', () => {
    expect(certificateHosts(new X509Certificate(issueServing(a, ['::1'], now, now + day).cert))).toEqual(['0:0:0:0:0:0:0:1']);
  });
});
