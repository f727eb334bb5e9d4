import { describe, expect, it } from 'vitest';
import { stricterThan, type Schema } from './schema-diff.js';

const obj = (properties: Record<string, Schema>, extra: Schema = {}): Schema => ({ type: 'object', properties, ...extra });
const str: Schema = { type: 'string' };

describe('stricterThan: where ours refuses what theirs accepts', () => {
  it.each<[string, Schema, Schema, string[]]>([
    ['the same schema', obj({ a: str }), obj({ a: str }), []],
    ['a field theirs has and ours prunes', obj({ a: str }), obj({ a: str, b: str }), ['missing b']],
    ['a field ours keeps as unknown fields', obj({ a: str }, { 'x-kubernetes-preserve-unknown-fields': true }), obj({ b: obj({ c: str }) }), []],
    ['a field only ours has: not stricter', obj({ a: str, b: str }), obj({ a: str }), []],
    ['another type', obj({ a: { type: 'integer' } }), obj({ a: str }), ['type a']],
    ['an enum narrower than theirs', obj({ a: { type: 'string', enum: ['x'] } }), obj({ a: { type: 'string', enum: ['x', 'y'] } }), ['enum a']],
    ['an enum where theirs takes any string', obj({ a: { type: 'string', enum: ['x'] } }), obj({ a: str }), ['enum a']],
    ['a wider enum: not stricter', obj({ a: { type: 'string', enum: ['x', 'y'] } }), obj({ a: { type: 'string', enum: ['x'] } }), []],
    ['a field ours requires', obj({ a: str }, { required: ['a'] }), obj({ a: str }), ['required .']],
    ['a lower maximum', obj({ a: { type: 'array', items: str, maxItems: 2 } }), obj({ a: { type: 'array', items: str, maxItems: 5 } }), ['limit a']],
    ['a higher maximum: not stricter', obj({ a: { type: 'array', items: str, maxItems: 9 } }), obj({ a: { type: 'array', items: str, maxItems: 5 } }), []],
    ['a minimum length', obj({ a: { type: 'string', minLength: 1 } }), obj({ a: str }), ['limit a']],
    ['a pattern', obj({ a: { type: 'string', pattern: '^x' } }), obj({ a: str }), ['pattern a']],
    ['a CEL rule theirs lacks', obj({ a: str }, { 'x-kubernetes-validations': [{ rule: 'has(self.a)' }] }), obj({ a: str }), ['rule .']],
    [
      'inside array items',
      obj({ a: { type: 'array', items: obj({ b: str }) } }),
      obj({ a: { type: 'array', items: obj({ b: str, c: str }) } }),
      ['missing a[].c'],
    ],
    [
      'inside map values',
      obj({ m: { type: 'object', additionalProperties: { type: 'integer' } } }),
      obj({ m: { type: 'object', additionalProperties: str } }),
      ['type m{}'],
    ],
    ['a map where ours has no values', obj({ m: { type: 'object' } }), obj({ m: { type: 'object', additionalProperties: str } }), ['missing m']],
  ])('%s', (_name, ours, theirs, want) => {
    expect(stricterThan(ours, theirs).map((d) => `${d.kind} ${d.path}`)).toEqual(want);
  });
});
