import { describe, expect, it } from 'vitest';
import { API_GROUPS } from '../api/groups.js';
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
    ['opkit', { name: 'ca' }, ['issuers.cert.opkit.dev/*', 'issuers.cert.opkit.dev/shop.ca']],
    ['opkit', { name: 'ca', kind: 'Issuer', group: 'cert-manager.io' }, ['issuers.cert.opkit.dev/*', 'issuers.cert.opkit.dev/shop.ca']],
    ['opkit', { name: 'public', kind: 'ClusterIssuer' }, ['clusterissuers.cert.opkit.dev/*', 'clusterissuers.cert.opkit.dev/public']],
    ['opkit', { name: 'vault', kind: 'VaultIssuer', group: 'example.com' }, ['vaultissuers.example.com/*', 'vaultissuers.example.com/shop.vault']],
    // cert-manager mode: its signer names, exactly as cert-manager's approver RBAC grants them.
    ['cert-manager', { name: 'ca' }, ['issuers.cert-manager.io/*', 'issuers.cert-manager.io/shop.ca']],
    [
      'cert-manager',
      { name: 'public', kind: 'ClusterIssuer', group: 'cert-manager.io' },
      ['clusterissuers.cert-manager.io/*', 'clusterissuers.cert-manager.io/public'],
    ],
    // opkit's group is no alias in cert-manager mode: an external issuer's, so namespaced.
    ['cert-manager', { name: 'ca', group: 'cert.opkit.dev' }, ['issuers.cert.opkit.dev/*', 'issuers.cert.opkit.dev/shop.ca']],
    [
      'cert-manager',
      { name: 'step', kind: 'StepClusterIssuer', group: 'certmanager.step.sm' },
      ['stepclusterissuers.certmanager.step.sm/*', 'stepclusterissuers.certmanager.step.sm/shop.step'],
    ],
  ] as const)('%s mode: the signer of a request for %j in namespace shop', (mode, ref, want) => {
    expect(signerNames(API_GROUPS[mode], ref, 'shop')).toEqual(want);
  });
});
