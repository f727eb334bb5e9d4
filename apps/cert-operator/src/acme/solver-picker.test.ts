import { describe, expect, it } from 'vitest';
import { pickSolver, solverProblems, type SolverSpec } from './solver-picker.js';

const solver = (name: string, selector?: SolverSpec['selector']): SolverSpec => ({ selector, http01: { ingress: { ingressClassName: name } } });
const picked = (solvers: SolverSpec[], dnsName: string, labels?: Record<string, string>) =>
  pickSolver(solvers, dnsName, labels)?.http01?.ingress?.ingressClassName;

describe('pickSolver (cert-manager precedence)', () => {
  const all = [
    solver('default'),
    solver('zone', { dnsZones: ['example.com'] }),
    solver('subzone', { dnsZones: ['shop.example.com'] }),
    solver('exact', { dnsNames: ['www.example.com'] }),
  ];

  it('prefers an exact dnsNames match over any zone', () => {
    expect(picked(all, 'www.example.com')).toBe('exact');
  });

  it('prefers the longest matching zone', () => {
    expect(picked(all, 'cart.shop.example.com')).toBe('subzone');
    expect(picked(all, 'api.example.com')).toBe('zone');
    expect(picked(all, 'example.com')).toBe('zone');
  });

  it('falls back to a solver without a name selector', () => {
    expect(picked(all, 'other.org')).toBe('default');
  });

  it('proves a wildcard only with DNS-01, matching its zone by the base name and dnsNames as written', () => {
    // The CA authorizes *.shop.example.com as shop.example.com, wildcard.
    expect(pickSolver(all, 'shop.example.com', {}, true)).toBeUndefined();
    const dns = (zone: string, selector?: SolverSpec['selector']): SolverSpec => ({ selector, dns01: { rfc2136: { nameserver: zone } } });
    const mixed = [...all, dns('zone-dns', { dnsZones: ['example.com'] }), dns('exact-wildcard', { dnsNames: ['*.shop.example.com'] })];
    expect(pickSolver(mixed, 'shop.example.com', {}, true)?.dns01?.rfc2136?.nameserver).toBe('exact-wildcard');
    expect(pickSolver(mixed, 'api.example.com', {}, true)?.dns01?.rfc2136?.nameserver).toBe('zone-dns');
    // Not a wildcard: HTTP-01 and DNS-01 solvers compete on specificity alike.
    expect(picked(mixed, 'www.example.com')).toBe('exact');
  });

  it.each([
    ['rfc2136 is supported', [{ dns01: { rfc2136: { nameserver: 'ns:53' } } }], []],
    [
      'another provider is named, not ignored',
      [{ http01: { ingress: {} } }, { dns01: { cloudflare: { apiTokenSecretRef: { name: 'cf' } } } as never }],
      [
        'solvers[1].dns01: the cloudflare DNS-01 provider is not supported by this operator (rfc2136 is built in; every other provider through its cert-manager DNS webhook solver)',
      ],
    ],
    ['a webhook solver is supported', [{ dns01: { webhook: { groupName: 'acme.example.com', solverName: 'hetzner', config: { zone: 'x' } } } }], []],
    [
      'a webhook solver without its names',
      [{ dns01: { webhook: { groupName: '', solverName: '' } } }],
      ['solvers[0].dns01.webhook: groupName is required', 'solvers[0].dns01.webhook: solverName is required'],
    ],
    [
      "a webhook solver pointed at Kubernetes' own groups, or at a path",
      [
        { dns01: { webhook: { groupName: 'rbac.authorization.k8s.io', solverName: 'clusterroles' } } },
        { dns01: { webhook: { groupName: 'kubernetes.io', solverName: 'x' } } },
        { dns01: { webhook: { groupName: 'acme.example.com', solverName: '../../api/v1/secrets' } } },
        { dns01: { webhook: { groupName: 'nodots', solverName: 'x' } } },
      ],
      [
        'solvers[0].dns01.webhook: groupName "rbac.authorization.k8s.io" is not a solver\'s API group (a DNS name with a dot, not one of Kubernetes\')',
        'solvers[1].dns01.webhook: groupName "kubernetes.io" is not a solver\'s API group (a DNS name with a dot, not one of Kubernetes\')',
        'solvers[2].dns01.webhook: solverName "../../api/v1/secrets" is not a resource name',
        'solvers[3].dns01.webhook: groupName "nodots" is not a solver\'s API group (a DNS name with a dot, not one of Kubernetes\')',
      ],
    ],
    [
      'two providers in one solver',
      [{ dns01: { rfc2136: { nameserver: 'ns' }, webhook: { groupName: 'acme.example.com', solverName: 'x' } } }],
      ['solvers[0].dns01: rfc2136 and webhook are both set; a solver has one provider'],
    ],
    [
      'a key name without its secret',
      [{ dns01: { rfc2136: { nameserver: 'ns', tsigKeyName: 'k' } } }],
      ['solvers[0].dns01.rfc2136: tsigKeyName and tsigSecretSecretRef go together'],
    ],
    ['no provider at all', [{ dns01: { cnameStrategy: 'Follow' } }], ['solvers[0].dns01: no provider set (rfc2136 or webhook)']],
  ] as [string, SolverSpec[], string[]][])('solverProblems: %s', (_, solvers, want) => {
    expect(solverProblems(solvers)).toEqual(want);
  });

  it('rules out solvers whose labels do not match, and prefers more matching labels in a tier', () => {
    const solvers = [solver('any'), solver('team-a', { matchLabels: { team: 'a' } }), solver('team-a-prod', { matchLabels: { team: 'a', env: 'prod' } })];
    expect(picked(solvers, 'x.org', { team: 'a', env: 'prod' })).toBe('team-a-prod');
    expect(picked(solvers, 'x.org', { team: 'a' })).toBe('team-a');
    expect(picked(solvers, 'x.org', { team: 'b' })).toBe('any');
    expect(picked([solver('only-a', { matchLabels: { team: 'a' } })], 'x.org')).toBeUndefined();
  });

  it('takes the earlier solver on a tie', () => {
    expect(picked([solver('first'), solver('second')], 'x.org')).toBe('first');
  });

  it('finds nothing when no solver fits, or no solver is HTTP-01', () => {
    expect(picked([solver('zone', { dnsZones: ['example.com'] })], 'example.org')).toBeUndefined();
    expect(pickSolver([{ selector: {} }], 'x.org')).toBeUndefined();
  });
});
