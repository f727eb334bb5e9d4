import { describe, expect, it } from 'vitest';
import { LruMap } from './lru-map.js';

describe('LruMap', () => {
  it.each([
    { ops: ['set a', 'set b', 'set c', 'set d'], kept: ['b', 'c', 'd'] },
    { ops: ['set a', 'set b', 'set c', 'get a', 'set d'], kept: ['c', 'a', 'd'] },
    { ops: ['set a', 'set b', 'set c', 'set a', 'set d'], kept: ['c', 'a', 'd'] },
    { ops: ['set a', 'set b', 'get x', 'set c', 'set d'], kept: ['b', 'c', 'd'] },
    { ops: ['set a', 'set b', 'delete a', 'set c', 'set d'], kept: ['b', 'c', 'd'] },
  ])('of 3: $ops keeps $kept, least recent first', ({ ops, kept }) => {
    const m = new LruMap<string, number>(3);
    ops.forEach((op, i) => {
      const [verb, key] = op.split(' ') as [string, string];
      if (verb === 'set') m.set(key, i);
      else if (verb === 'get') m.get(key);
      else m.delete(key);
    });
    expect([...m.entries()].map(([k]) => k)).toEqual(kept);
    expect(m.size).toBe(kept.length);
  });

  it('refuses a bound under one', () => {
    expect(() => new LruMap(0)).toThrow(/at least 1/);
  });
});
