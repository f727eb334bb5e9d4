import { describe, expect, it } from 'vitest';
import { parseLabelSelector } from './label-selector.js';

describe('parseLabelSelector', () => {
  const labels = { app: 'web', tier: 'front', env: 'prod' };
  it.each([
    ['app=web', true],
    ['app==web,tier=front', true],
    ['app!=web', false],
    ['app in (web, api)', true],
    ['env notin (dev,test)', true],
    ['tier', true],
    ['!tier', false],
    ['!missing,app=web', true],
    ['app in (api)', false],
    ['missing!=x', true],
  ])('%s → %s', (selector, expected) => {
    expect(parseLabelSelector(selector)(labels)).toBe(expected);
  });

  it('accepts a matchLabels map', () => {
    expect(parseLabelSelector({ app: 'web' })(labels)).toBe(true);
    expect(parseLabelSelector({ app: 'api' })(labels)).toBe(false);
  });

  it('rejects nonsense with the offending term', () => {
    expect(() => parseLabelSelector('a in b')).toThrow(/invalid label selector term: "a in b"/);
  });
});
