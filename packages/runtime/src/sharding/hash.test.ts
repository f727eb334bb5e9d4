import { describe, expect, it } from 'vitest';
import { hashLiteral, shardHash } from './hash.js';

describe('shardHash', () => {
  // Computed with Go's hash/fnv New64a, which k8s.io/apimachinery/pkg/sharding.HashField uses.
  it.each([
    ['', 'cbf29ce484222325'],
    ['a', 'af63dc4c8601ec8c'],
    ['default', 'ebada5168620c5fe'],
    ['kube-system', 'df65c7bc1d82b35e'],
    ['3f1c2e8a-9b7d-4c1e-8f2a-1b2c3d4e5f60', '84acfff74fdc3e25'],
    ['ünïcødé-名前', 'e7e02dcccc2412aa'],
  ])('hashes %j as the API server does', (value, hex) => {
    expect(hashLiteral(shardHash(value))).toBe(`0x${hex}`);
  });

  it('spells the ends of the hash space as the API does', () => {
    expect(hashLiteral(0n)).toBe('0x0000000000000000');
    expect(hashLiteral(1n << 64n)).toBe('0x10000000000000000');
  });
});

describe('memberLeaseName', () => {
  it('makes any identity a valid Lease name, distinct for distinct identities', async () => {
    const { memberLeaseName } = await import('./member.js');
    const valid = /^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/;
    const names = ['memcached-operator-7d9f_0f1e2d3c-aaaa-bbbb', 'memcached-operator-7d9f-0f1e2d3c-aaaa-bbbb', 'Laptop_1a2b', 'x'.repeat(300)].map((i) =>
      memberLeaseName('memcached-operator', i),
    );
    for (const n of names) expect(n).toMatch(valid);
    expect(new Set(names).size).toBe(names.length);
    expect(memberLeaseName('ring', 'r-a')).toBe('ring-member-r-a');
  });
});
