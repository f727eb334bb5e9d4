import { describe, expect, it } from 'vitest';
import { certificateHosts, decideRotation, heldCertificates, type HeldCertificates } from './rotation.js';
import { issueCa, issueServing } from './self-signed.js';
import { X509Certificate } from 'node:crypto';

const day = 86_400_000;
const t0 = Date.UTC(2026, 0, 1);
const ca = { notBefore: t0, notAfter: t0 + 365 * day };
const serving = (o: Partial<NonNullable<HeldCertificates['serving']>> = {}) => ({ notBefore: t0, notAfter: t0 + 90 * day, hosts: ['svc.ns.svc'], signedByCa: true, ...o });

describe('decideRotation', () => {
  it.each<[string, HeldCertificates, number, string]>([
    ['nothing held', {}, t0, 'issue-ca'],
    ['a CA, no serving certificate', { ca }, t0, 'issue-serving'],
    ['both fresh', { ca, serving: serving() }, t0 + day, 'keep'],
    ['serving just before two thirds', { ca, serving: serving() }, t0 + 60 * day - 1, 'keep'],
    ['serving at two thirds', { ca, serving: serving() }, t0 + 60 * day, 'issue-serving'],
    ['serving expired', { ca, serving: serving() }, t0 + 91 * day, 'issue-serving'],
    ['CA at two thirds (before the serving certificate)', { ca, serving: serving({ notBefore: t0 + 240 * day, notAfter: t0 + 330 * day }) }, t0 + 244 * day, 'issue-ca'],
    ['serving signed by another CA', { ca, serving: serving({ signedByCa: false }) }, t0, 'issue-serving'],
    ['serving names other hosts', { ca, serving: serving({ hosts: ['old.ns.svc'] }) }, t0, 'issue-serving'],
  ])('%s → %s', (_, held, now, action) => {
    expect(decideRotation(held, ['svc.ns.svc'], now).action).toBe(action);
  });

  it('rechecks at the first renewal time', () => {
    expect(decideRotation({ ca, serving: serving() }, ['svc.ns.svc'], t0)).toEqual({ action: 'keep', recheckAt: t0 + 60 * day });
  });

  it('compares IPv6 names as the certificate prints them (else it would reissue forever)', () => {
    expect(decideRotation({ ca, serving: serving({ hosts: ['0:0:0:0:0:0:0:1'] }) }, ['::1'], t0).action).toBe('keep');
    expect(decideRotation({ ca, serving: serving({ hosts: ['FD00:0:0:0:0:0:0:A'] }) }, ['fd00::a'], t0).action).toBe('keep');
  });

  it('ignores the order of hosts', () => {
    expect(decideRotation({ ca, serving: serving({ hosts: ['b', 'a'] }) }, ['a', 'b'], t0).action).toBe('keep');
  });
});

describe('heldCertificates', () => {
  const now = Date.now();
  const a = issueCa('a', now - day, now + 365 * day);
  const leaf = issueServing(a, ['svc.ns.svc', '127.0.0.1'], now - day, now + 90 * day);

  it('reads what a Secret it wrote holds', () => {
    const held = heldCertificates({ caCert: a.cert, caKey: a.key, cert: leaf.cert, key: leaf.key });
    expect(held.ca?.notAfter).toBe(Math.floor((now + 365 * day) / 1000) * 1000);
    expect(held.serving).toMatchObject({ hosts: ['svc.ns.svc', '127.0.0.1'], signedByCa: true });
  });

  it('takes the first CA of a bundle that still carries the previous one', () => {
    const b = issueCa('b', now - day, now + 365 * day);
    expect(heldCertificates({ caCert: b.cert + a.cert, caKey: b.key, cert: leaf.cert, key: leaf.key }).serving?.signedByCa).toBe(false);
  });

  it('treats garbage as missing', () => {
    expect(heldCertificates({ caCert: 'junk', caKey: 'junk', cert: 'junk', key: 'junk' })).toEqual({});
  });

  it('reads IPv6 names as the certificate prints them', () => {
    expect(certificateHosts(new X509Certificate(issueServing(a, ['::1'], now, now + day).cert))).toEqual(['0:0:0:0:0:0:0:1']);
  });
});
