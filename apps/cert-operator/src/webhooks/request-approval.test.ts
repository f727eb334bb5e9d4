import { describe, expect, it } from 'vitest';
import { approvalChange, signerNames } from './request-approval.js';

const c = (type: string, status = 'True') => ({ type, status });

describe('approval of CertificateRequests', () => {
  it.each([
    ['nothing about approval', [c('Ready', 'False')], [c('Ready', 'True')], { kind: 'none' }],
    ['approved', [], [c('Approved')], { kind: 'decides', type: 'Approved' }],
    ['denied', undefined, [c('Denied')], { kind: 'decides', type: 'Denied' }],
    ['approved, then the same again (a status write of the signer)', [c('Approved')], [c('Approved'), c('Ready')], { kind: 'none' }],
    ['approved with status False', [], [c('Approved', 'False')], { kind: 'refused', reason: 'the Approved condition may only be set with status True' }],
    ['both at once', [], [c('Approved'), c('Denied')], { kind: 'refused', reason: 'a CertificateRequest cannot be both Approved and Denied' }],
    [
      'denied after approval',
      [c('Approved')],
      [c('Approved'), c('Denied')],
      { kind: 'refused', reason: 'a CertificateRequest cannot be both Approved and Denied' },
    ],
    ['approval removed', [c('Approved')], [], { kind: 'refused', reason: 'the Approved condition is final once set: it may not be changed or removed' }],
    [
      'denial flipped',
      [c('Denied')],
      [c('Denied', 'False')],
      { kind: 'refused', reason: 'the Denied condition is final once set: it may not be changed or removed' },
    ],
  ])('%s', (_, before, after, want) => {
    expect(approvalChange(before, after)).toEqual(want);
  });

  it.each([
    [{ name: 'ca' }, ['issuers.cert.opkit.dev/*', 'issuers.cert.opkit.dev/shop.ca']],
    [{ name: 'ca', kind: 'Issuer', group: 'cert-manager.io' }, ['issuers.cert.opkit.dev/*', 'issuers.cert.opkit.dev/shop.ca']],
    [{ name: 'public', kind: 'ClusterIssuer' }, ['clusterissuers.cert.opkit.dev/*', 'clusterissuers.cert.opkit.dev/public']],
    [{ name: 'vault', kind: 'VaultIssuer', group: 'example.com' }, ['vaultissuers.example.com/*', 'vaultissuers.example.com/shop.vault']],
  ])('the signer of a request for %j in namespace shop', (ref, want) => {
    expect(signerNames(ref, 'shop')).toEqual(want);
  });
});
