import { describe, expect, it } from 'vitest';
import { forgetRenewalInfo } from './renewal-info.js';
import type { CertificateStatus } from './status.js';

describe('forgetRenewalInfo', () => {
  const ari = { suggestedWindow: { start: '2026-11-27T10:00:00Z', end: '2026-11-27T11:00:00Z' }, lastChecked: '2026-11-27T09:00:00.000Z' };
  const status = (): CertificateStatus => ({ notAfter: '2026-12-03T12:00:00Z', acme: { ari } });
  const cases: [string, string, boolean, boolean][] = [
    ['keeps what is known about the certificate recorded again', '2026-12-03T12:00:00Z', false, true],
    ['keeps it when the CA wrote fractions of a second', '2026-12-03T12:00:00.640Z', false, true],
    ['drops it for another certificate', '2026-12-03T12:00:05Z', false, false],
    // A successor signed within the same second as the certificate it replaces.
    ['drops it for a new issuance with the same notAfter', '2026-12-03T12:00:00Z', true, false],
  ];
  it.each(cases)('%s', (_name, notAfter, issued, kept) => {
    const s = status();
    forgetRenewalInfo(s, notAfter, issued);
    expect(s.acme?.ari).toEqual(kept ? ari : undefined);
    if (!kept) expect(s.acme).toBeUndefined();
  });
});
