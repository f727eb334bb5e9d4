import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../client/types.js';
import { caughtUp, compareResourceVersions, type Expectation } from './read-your-writes.js';

const obj = (rv: string, deleting = false): KubeObject => ({
  metadata: { name: 'x', namespace: 'ns', resourceVersion: rv, ...(deleting ? { deletionTimestamp: '2026-11-23T00:00:00Z' } : {}) },
});

describe('compareResourceVersions', () => {
  it.each([
    ['9', '10', -1],
    ['10', '9', 1],
    ['123', '123', 0],
    ['123', '124', -1],
    ['abc', 'abd', undefined],
    ['abc', 'abc', 0],
    [undefined, '1', undefined],
  ] as const)('%s vs %s → %s', (a, b, want) => expect(compareResourceVersions(a, b)).toBe(want));
});

describe('caughtUp', () => {
  const written = (rv: string): Expectation => ({ kind: 'written', resourceVersion: rv });
  it.each([
    ['the cache holds the written version', written('20'), obj('20'), '20', true],
    ['the cache holds a later version', written('20'), obj('25'), '25', true],
    ['the cache still holds the old version', written('20'), obj('12'), '15', false],
    ['a no-op write (same version as cached)', written('12'), obj('12'), '15', true],
    ['not cached yet, watch behind', written('20'), undefined, '19', false],
    ['not cached, watch past it: outside the selector', written('20'), undefined, '21', true],
    ['an opaque version the cache holds', written('a'), obj('a'), 'x', true],
    ['an opaque version the cache does not hold', written('a'), obj('b'), 'x', false],
    ['delete: gone', { kind: 'deleted' } as Expectation, undefined, '1', true],
    ['delete: marked', { kind: 'deleted' } as Expectation, obj('30', true), '30', true],
    ['delete: still there unmarked', { kind: 'deleted' } as Expectation, obj('12'), '20', false],
  ])('%s', (_what, expected, cached, informerRv, want) => expect(caughtUp(expected, cached, informerRv)).toBe(want));
});
