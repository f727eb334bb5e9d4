import { describe, expect, it } from 'vitest';
import { pickSolver, type SolverSpec } from './solver-picker.js';

const solver = (name: string, selector?: SolverSpec['selector']): SolverSpec => ({ selector, http01: { ingress: { ingressClassName: name } } });
const picked = (solvers: SolverSpec[], dnsName: string, labels?: Record<string, string>) => pickSolver(solvers, dnsName, labels)?.http01?.ingress?.ingressClassName;

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

  it('matches a wildcard by its base name', () => {
    expect(picked(all, '*.shop.example.com')).toBe('subzone');
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
