import { describe, expect, it } from 'vitest';
import { labelSelectorMatcher, parseLabelSelector } from './label-selector.js';

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

describe('labelSelectorMatcher (a selector written in an object)', () => {
  it.each<[string, Parameters<typeof labelSelectorMatcher>[0], Record<string, string> | undefined, boolean]>([
    ['no selector matches everything', undefined, { a: 'b' }, true],
    ['an empty selector matches everything', {}, undefined, true],
    ['matchLabels: equal', { matchLabels: { tenant: 'true' } }, { tenant: 'true', x: 'y' }, true],
    ['matchLabels: other value', { matchLabels: { tenant: 'true' } }, { tenant: 'false' }, false],
    ['matchLabels: missing', { matchLabels: { tenant: 'true' } }, undefined, false],
    ['In', { matchExpressions: [{ key: 'env', operator: 'In', values: ['a', 'b'] }] }, { env: 'b' }, true],
    ['NotIn with the label absent', { matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['a'] }] }, {}, true],
    ['NotIn', { matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['a'] }] }, { env: 'a' }, false],
    ['Exists', { matchExpressions: [{ key: 'env', operator: 'Exists' }] }, { env: '' }, true],
    ['DoesNotExist', { matchExpressions: [{ key: 'env', operator: 'DoesNotExist' }] }, { env: 'a' }, false],
    ['terms are ANDed', { matchLabels: { a: '1' }, matchExpressions: [{ key: 'b', operator: 'Exists' }] }, { a: '1' }, false],
    ['an unknown operator matches nothing', { matchExpressions: [{ key: 'env', operator: 'Like', values: ['a'] }] }, { env: 'a' }, false],
    ['a label named like an Object method is not inherited', { matchExpressions: [{ key: 'constructor', operator: 'Exists' }] }, {}, false],
  ])('%s', (_, selector, labels, expected) => {
    expect(labelSelectorMatcher(selector)(labels)).toBe(expected);
  });
});
