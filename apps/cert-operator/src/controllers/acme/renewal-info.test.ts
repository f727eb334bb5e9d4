import { describe, expect, it } from 'vitest';
import type { CertificateObject } from '../../api/v1/certificate.js';
import { ariStep, type AriStep } from './renewal-info.js';

const NOW = Date.parse('2026-11-27T12:00:00Z');
const cert = (status: CertificateObject['status']): CertificateObject => ({
  apiVersion: 'cert.opkit.dev/v1',
  kind: 'Certificate',
  metadata: { name: 'web', namespace: 'apps', uid: 'u1' },
  spec: { secretName: 'web', issuerRef: { name: 'le' }, dnsNames: ['web.example.com'] },
  status,
});
const issued = { notAfter: '2027-02-25T12:00:00Z' };
const ari = (nextCheck: string) => ({ acme: { ari: { nextCheck, suggestedWindow: { start: '2027-01-25T00:00:00Z', end: '2027-01-27T00:00:00Z' } } } });

describe('ariStep: when the renewal-info controller asks the CA', () => {
  it.each<[string, CertificateObject['status'], AriStep]>([
    ['nothing issued yet', {}, { kind: 'idle' }],
    [
      'a certificate being issued (asked about once it is in the Secret)',
      { ...issued, conditions: [{ type: 'Issuing', status: 'True', reason: 'Renewing', message: '', lastTransitionTime: '2026-11-27T11:00:00Z' }] },
      { kind: 'idle' },
    ],
    ['issued, nothing known yet', issued, { kind: 'ask' }],
    ['issued, checked, next check in an hour', { ...issued, ...ari('2026-11-27T13:00:00Z') }, { kind: 'wait', ms: 3_600_000 }],
    ['issued, next check due now', { ...issued, ...ari('2026-11-27T12:00:00Z') }, { kind: 'ask' }],
    ['issued, next check past (the operator was down)', { ...issued, ...ari('2026-11-20T00:00:00Z') }, { kind: 'ask' }],
    ['a next check that does not parse', { ...issued, ...ari('soon') }, { kind: 'ask' }],
  ])('%s → %o', (_name, status, want) => {
    expect(ariStep(cert(status), NOW)).toEqual(want);
  });
});
