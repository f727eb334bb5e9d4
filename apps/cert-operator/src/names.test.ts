import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { childName, MAX_NAME } from './names.js';

const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

describe('childName: names of the objects made for another', () => {
  it.each([
    ['web', '1', 'web-1'],
    ['a'.repeat(251), '1', `${'a'.repeat(251)}-1`],
    ['a'.repeat(252), '1', `${'a'.repeat(242)}-HASH-1`],
    [`b${'.y'.repeat(126)}`, '12', `b${'.y'.repeat(120)}-HASH-12`],
  ])('%s + %s', (parent, suffix, want) => {
    const got = childName(parent, suffix);
    expect(got.length).toBeLessThanOrEqual(MAX_NAME);
    expect(got.replace(/-[0-9a-f]{8}-/, '-HASH-')).toBe(want);
  });

  it('is always a valid name, deterministic, ends with the suffix, and tells different parents apart', () => {
    const label = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
    const subdomain = fc
      .array(label, { minLength: 1, maxLength: 8 })
      .map((l) =>
        l
          .join('.')
          .slice(0, MAX_NAME)
          .replace(/[-.]+$/, ''),
      )
      .filter((s) => s.length > 0);
    const suffix = fc.oneof(fc.integer({ min: 1, max: 99_999 }).map(String), fc.stringMatching(/^[0-9]{1,10}$/));
    fc.assert(
      fc.property(subdomain, subdomain, suffix, (a, b, s) => {
        const name = childName(a, s);
        expect(name.length).toBeLessThanOrEqual(MAX_NAME);
        expect(name).toMatch(SUBDOMAIN);
        expect(name.endsWith(`-${s}`)).toBe(true);
        expect(childName(a, s)).toBe(name);
        if (a !== b) expect(childName(b, s)).not.toBe(name);
      }),
      { numRuns: 2_000 },
    );
  });
});
