import { describe, expect, it } from 'vitest';
import { versionChanges } from './operator.js';

describe('versionChanges', () => {
  it('names each object created, written or gone between two snapshots, sorted', () => {
    const before = { 'Secret a/x': '1', 'Secret a/y': '2', 'Order a/z': '3' };
    const after = { 'Secret a/x': '1', 'Secret a/y': '5', 'Secret a/w': '6' };
    expect(versionChanges(before, after)).toEqual(['created: Secret a/w', 'gone: Order a/z', 'written: Secret a/y']);
  });

  it('is empty for equal snapshots', () => {
    expect(versionChanges({ 'Secret a/x': '1' }, { 'Secret a/x': '1' })).toEqual([]);
  });
});
