import { describe, expect, it } from 'vitest';
import { certificateNameLabel } from './name-label.js';

// What the API server accepts as a label value.
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

describe('certificateNameLabel', () => {
  it('is the name itself while it fits a label value', () => {
    expect(certificateNameLabel('web')).toBe('web');
    expect(certificateNameLabel('x'.repeat(63))).toBe('x'.repeat(63));
  });

  it('is a valid label value of 63 characters for longer names, different for names sharing a prefix', () => {
    const a = certificateNameLabel(`${'a'.repeat(100)}-one`);
    const b = certificateNameLabel(`${'a'.repeat(100)}-two`);
    for (const v of [a, b, certificateNameLabel(`${'w.'.repeat(100)}x`), certificateNameLabel('y'.repeat(253))]) {
      expect(v).toHaveLength(63);
      expect(v).toMatch(LABEL_VALUE);
    }
    expect(a).not.toBe(b);
    expect(certificateNameLabel(`${'a'.repeat(100)}-one`)).toBe(a);
  });
});
