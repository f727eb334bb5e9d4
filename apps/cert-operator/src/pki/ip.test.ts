import { describe, expect, it } from 'vitest';
import { normalizeIP } from './ip.js';

describe('normalizeIP', () => {
  it.each([
    ['2001:db8::1', '2001:DB8:0:0:0:0:0:1'],
    ['2001:db8::1', '2001:0db8:0000::0001'],
    ['::1', '0:0:0:0:0:0:0:1'],
    ['::', '0:0:0:0:0:0:0:0'],
    ['fe80::1:2', 'FE80:0:0:0:0:0:1:2'],
    ['::ffff:192.0.2.1', '::ffff:c000:201'],
    ['192.0.2.1', '192.0.2.1'],
  ])('%s and %s are one address', (a, b) => expect(normalizeIP(a)).toBe(normalizeIP(b)));

  it.each([
    ['2001:db8::1', '2001:db8::2'],
    ['192.0.2.1', '::ffff:192.0.2.1'],
    ['10.0.0.1', '10.0.0.10'],
  ])('%s and %s differ', (a, b) => expect(normalizeIP(a)).not.toBe(normalizeIP(b)));

  it('keeps text that is no address, so it still compares unequal to any address', () => expect(normalizeIP('not-an-ip')).toBe('not-an-ip'));
});
