import { describe, expect, it } from 'vitest';
import type { CertificateObject, CertificateSpecType } from '../../api/v1/certificate.js';
import { renewalPlan, type IssuerRenewal, type RenewalPlan } from './renewal-plan.js';

const DAY = 86_400_000;
// A 90-day certificate issued on a Wednesday: renewBefore's default renews it 60 days in, on Sunday 2027-01-24.
const notBefore = new Date('2026-11-25T00:00:00Z');
const cert = { notBefore, notAfter: new Date(notBefore.getTime() + 90 * DAY) };
const certificate = (renewal?: CertificateSpecType['renewal'], ari?: [string, string]): CertificateObject => ({
  apiVersion: 'cert.opkit.dev/v1',
  kind: 'Certificate',
  metadata: { name: 'web', namespace: 'apps', uid: 'u1' },
  spec: { secretName: 'web', issuerRef: { name: 'le' }, dnsNames: ['web.example.com'], ...(renewal ? { renewal } : {}) },
  status: {
    notAfter: cert.notAfter.toISOString(),
    ...(ari ? { acme: { ari: { suggestedWindow: { start: ari[0], end: ari[1] } } } } : {}),
  },
});
const weekdays = [{ cron: '0 9 * * MON-FRI', timezone: 'Europe/Berlin', windowDuration: '8h' }];
const issuer = (renewal: IssuerRenewal['renewal']): IssuerRenewal => ({ kind: 'ClusterIssuer', name: 'le', renewal });
const DAY1 = new Date(notBefore.getTime() + DAY);

describe('renewalPlan', () => {
  it.each<[string, CertificateObject, IssuerRenewal | undefined, Omit<Partial<RenewalPlan>, 'at'> & { at?: string }, Date?]>([
    ['renewBefore alone: two thirds of the lifetime', certificate(), undefined, { at: '2027-01-24T00:00:00.000Z' }],
    [
      "the CA's window (ARI) instead of renewBefore",
      certificate(undefined, ['2027-01-10T00:00:00Z', '2027-01-10T00:00:01Z']),
      undefined,
      { at: '2027-01-10T00:00:00.000Z' },
    ],
    ['weekday windows: Sunday waits for Monday 09:00 in Berlin', certificate({ windows: weekdays }), undefined, { at: '2027-01-25T08:00:00.000Z' }],
    ["the issuer's windows, when the Certificate has none", certificate(), issuer({ windows: weekdays }), { at: '2027-01-25T08:00:00.000Z' }],
    [
      "the Certificate's windows replace the issuer's",
      certificate({ windows: [{ cron: '0 0 * * SUN', windowDuration: '1h' }] }),
      issuer({ windows: weekdays }),
      { at: '2027-01-24T00:00:00.000Z' },
    ],
    [
      'no window before expiry: when wanted, outside the windows, said',
      certificate({ windows: [{ cron: '0 0 1 6 *', windowDuration: '1h' }] }),
      undefined,
      { at: '2027-01-24T00:00:00.000Z', outsideWindows: true },
    ],
    [
      'paused by the Certificate',
      certificate({ policy: 'Disabled' }),
      undefined,
      { at: undefined, paused: { by: 'the Certificate', wouldRenewAt: new Date('2027-01-24T00:00:00Z') } },
    ],
    [
      'paused by the issuer, whatever the Certificate says',
      certificate({ policy: 'RenewBefore', windows: weekdays }),
      issuer({ policy: 'Disabled' }),
      { at: undefined, paused: { by: 'ClusterIssuer "le"', wouldRenewAt: new Date('2027-01-24T00:00:00Z') } },
    ],
    [
      'overdue (a pause lifted on Friday evening): waits for the next window, Monday morning',
      certificate({ windows: weekdays }),
      undefined,
      { at: '2027-02-01T08:00:00.000Z' },
      new Date('2027-01-29T17:00:00Z'),
    ],
    [
      'overdue inside a window: at once (the time wanted, past)',
      certificate({ windows: weekdays }),
      undefined,
      { at: '2027-01-24T00:00:00.000Z' },
      new Date('2027-01-29T09:00:00Z'),
    ],
    [
      'a window opening later than a tenth of the lifetime before expiry: outside the windows',
      certificate({ windows: [{ cron: '0 0 20 2 *', windowDuration: '1h' }] }),
      undefined,
      { at: '2027-01-24T00:00:00.000Z', outsideWindows: true },
    ],
    [
      "a CA's window reaching past expiry: no later than a tenth of the lifetime before it",
      certificate(undefined, ['2027-02-22T00:00:00Z', '2027-03-01T00:00:00Z']),
      undefined,
      { at: '2027-02-14T00:00:00.000Z' },
    ],
  ])('%s', (_name, c, iss, want, now = DAY1) => {
    const plan = renewalPlan(c, cert, now, iss);
    const { at, ...rest } = want;
    expect(plan.at?.toISOString()).toBe(at);
    expect(plan).toMatchObject(rest);
    expect(plan.why).not.toBe('');
  });

  it('plans a certificate just issued by renewBefore, whatever window the status keeps for the one it replaced (same notAfter to the second)', () => {
    const replaced = certificate(undefined, ['2026-11-20T00:00:00Z', '2026-11-21T00:00:00Z']);
    // The status's window, in the past, is taken for this certificate's when it is not new:
    expect(renewalPlan(replaced, cert, DAY1).at?.toISOString()).toMatch(/^2026-11-20/);
    expect(renewalPlan(replaced, cert, DAY1, undefined, true).at?.toISOString()).toBe('2027-01-24T00:00:00.000Z');
  });

  it('says why, naming the windows', () => {
    expect(renewalPlan(certificate({ windows: weekdays }), cert, DAY1).why).toBe(
      "before expiry by renewBefore (a third of the lifetime unless set), at the next opening of the Certificate's renewal windows",
    );
    expect(renewalPlan(certificate(), cert, DAY1, issuer({ windows: [{ cron: '@daily', windowDuration: '24h' }] })).why).toBe(
      'before expiry by renewBefore (a third of the lifetime unless set), in one of ClusterIssuer "le"\'s renewal windows',
    );
  });
});
