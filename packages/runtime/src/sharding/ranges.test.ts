import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { contains, formatRanges, intersect, parseRanges, rangeSet, shardSelector, share, subtract, union, WHOLE, type RangeSet } from './ranges.js';

const r = (start: number, end: number) => ({ start: BigInt(start), end: BigInt(end) });
const arbSet = fc
  .array(fc.tuple(fc.bigInt({ min: 0n, max: 100n }), fc.bigInt({ min: 0n, max: 100n })), { maxLength: 6 })
  .map((pairs) => rangeSet(pairs.map(([a, b]) => ({ start: a < b ? a : b, end: a < b ? b : a }))));
const points = (s: RangeSet) => Array.from({ length: 101 }, (_, i) => BigInt(i)).filter((p) => contains(s, p));

describe('range sets', () => {
  it('normalizes: sorted, merged where they touch or overlap, empty ranges dropped', () => {
    expect(rangeSet([r(5, 7), r(0, 2), r(2, 3), r(6, 9), r(4, 4)])).toEqual([r(0, 3), r(5, 9)]);
  });

  it('spells a shard selector as the API server parses it', () => {
    expect(
      shardSelector('object.metadata.uid', [
        { start: 0n, end: 1n << 63n },
        { start: 3n << 62n, end: 1n << 64n },
      ]),
    ).toBe(
      "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || shardRange(object.metadata.uid, '0xc000000000000000', '0x10000000000000000')",
    );
    expect(share(WHOLE)).toBe(1);
    // Nothing, as near as the server lets it be said (it refuses an empty range; no selector is everything).
    expect(shardSelector('object.metadata.namespace', [])).toBe("shardRange(object.metadata.namespace, '0x0000000000000000', '0x0000000000000001')");
  });

  it('union, intersection and difference agree with the points they hold', () => {
    fc.assert(
      fc.property(arbSet, arbSet, (a, b) => {
        const pa = new Set(points(a));
        const pb = new Set(points(b));
        expect(points(union(a, b))).toEqual(
          points(a)
            .concat(points(b).filter((p) => !pa.has(p)))
            .sort((x, y) => (x < y ? -1 : 1)),
        );
        expect(points(intersect(a, b))).toEqual(points(a).filter((p) => pb.has(p)));
        expect(points(subtract(a, b))).toEqual(points(a).filter((p) => !pb.has(p)));
        // Results are in normal form.
        for (const s of [union(a, b), intersect(a, b), subtract(a, b)]) expect(rangeSet(s)).toEqual(s);
      }),
    );
  });

  it('reads back what it writes into a Lease annotation', () => {
    fc.assert(
      fc.property(arbSet, (a) => {
        expect(parseRanges(formatRanges(a))).toEqual(a);
      }),
    );
    expect(parseRanges(formatRanges(WHOLE))).toEqual(WHOLE);
    expect(parseRanges('5-3')).toBeUndefined();
    expect(parseRanges('0-20000000000000000')).toBeUndefined();
  });
});
