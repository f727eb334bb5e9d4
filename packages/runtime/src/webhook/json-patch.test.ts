import { describe, expect, it } from 'vitest';
import { diffPatch } from './json-patch.js';

describe('diffPatch', () => {
  it.each([
    ['nothing changed', { a: 1, b: { c: [1, 2] } }, { a: 1, b: { c: [1, 2] } }, []],
    ['a field added deep', { spec: {} }, { spec: { username: 'u' } }, [{ op: 'add', path: '/spec/username', value: 'u' }]],
    ['a field replaced', { spec: { username: 'forged' } }, { spec: { username: 'real' } }, [{ op: 'replace', path: '/spec/username', value: 'real' }]],
    ['a field removed', { spec: { uid: 'x', a: 1 } }, { spec: { a: 1 } }, [{ op: 'remove', path: '/spec/uid' }]],
    ['undefined counts as absent', { spec: { uid: 'x' } }, { spec: { uid: undefined } }, [{ op: 'remove', path: '/spec/uid' }]],
    ['arrays replaced whole', { g: ['a'] }, { g: ['a', 'b'] }, [{ op: 'replace', path: '/g', value: ['a', 'b'] }]],
    ['keys with / and ~ escaped', { m: {} }, { m: { 'a/b~c': 1 } }, [{ op: 'add', path: '/m/a~1b~0c', value: 1 }]],
  ])('%s', (_, before, after, ops) => {
    expect(diffPatch(before, after)).toEqual(ops);
  });
});
