import { hashLiteral } from './hash.js';

/** The whole hash space ends here (exclusive): 2^64. */
export const SPACE_END = 1n << 64n;

/** Part of the hash space, [start, end), as a shardRange() of the API takes it. */
export interface HashRange {
  start: bigint;
  end: bigint;
}

/**
 * A set of hash ranges, always sorted, disjoint, non-empty ranges and merged where they touch, so
 * that two sets holding the same points are equal element by element. Every function here takes
 * and returns that form.
 */
export type RangeSet = readonly HashRange[];

export const EMPTY: RangeSet = [];
export const WHOLE: RangeSet = [{ start: 0n, end: SPACE_END }];

/** Any ranges, in any order, overlapping or empty, as a RangeSet. */
export function rangeSet(ranges: readonly HashRange[]): RangeSet {
  const sorted = ranges.filter((r) => r.start < r.end).sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  const out: HashRange[] = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last && r.start <= last.end) last.end = r.end > last.end ? r.end : last.end;
    else out.push({ start: r.start, end: r.end });
  }
  return out;
}

export function union(a: RangeSet, b: RangeSet): RangeSet {
  return rangeSet([...a, ...b]);
}

/**
 * Both sorted lists of ranges walked together: each stretch where a range of `a` meets a range of
 * `b`, with the two ranges it lies in (intersections, and an assignment overlaid with another).
 */
export function overlaps<A extends HashRange, B extends HashRange>(a: readonly A[], b: readonly B[]): { start: bigint; end: bigint; a: A; b: B }[] {
  const out: { start: bigint; end: bigint; a: A; b: B }[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!;
    const y = b[j]!;
    const start = x.start > y.start ? x.start : y.start;
    const end = x.end < y.end ? x.end : y.end;
    if (start < end) out.push({ start, end, a: x, b: y });
    if (x.end < y.end) i++;
    else j++;
  }
  return out;
}

export function intersect(a: RangeSet, b: RangeSet): RangeSet {
  return rangeSet(overlaps(a, b).map(({ start, end }) => ({ start, end })));
}

/** What of `a` is not in `b`. */
export function subtract(a: RangeSet, b: RangeSet): RangeSet {
  const out: HashRange[] = [];
  for (const r of a) {
    let start = r.start;
    for (const cut of b) {
      if (cut.end <= start || cut.start >= r.end) continue;
      if (cut.start > start) out.push({ start, end: cut.start });
      start = cut.end > start ? cut.end : start;
    }
    if (start < r.end) out.push({ start, end: r.end });
  }
  return rangeSet(out);
}

export function contains(set: RangeSet, h: bigint): boolean {
  return set.some((r) => r.start <= h && h < r.end);
}

export function isEmpty(set: RangeSet): boolean {
  return set.length === 0;
}

export function sameRanges(a: RangeSet, b: RangeSet): boolean {
  return a.length === b.length && a.every((r, i) => r.start === b[i]!.start && r.end === b[i]!.end);
}

/** The share of the hash space a set covers, in [0, 1]. */
export function share(set: RangeSet): number {
  return Number(set.reduce((n, r) => n + (r.end - r.start), 0n)) / Number(SPACE_END);
}

/**
 * The API server's shard selector for these ranges: `shardRange(field, start, end)` terms joined
 * by `||` (KEP-5866). `field` is `object.metadata.uid` or `object.metadata.namespace`. The server
 * refuses an empty range and reads no selector as "everything", so the empty set is spelled [0, 1):
 * the objects hashing to exactly 0 (one in 2^64), which a sharded controller's own filter drops.
 */
export function shardSelector(field: ShardField, set: RangeSet): string {
  const ranges = set.length ? set : [{ start: 0n, end: 1n }];
  return ranges.map((r) => `shardRange(${field}, '${hashLiteral(r.start)}', '${hashLiteral(r.end)}')`).join(' || ');
}

export type ShardField = 'object.metadata.uid' | 'object.metadata.namespace';

/** How a RangeSet is written into a Lease annotation: `start-end` pairs in hex, comma-separated. */
export function formatRanges(set: RangeSet): string {
  return set.map((r) => `${r.start.toString(16)}-${r.end.toString(16)}`).join(',');
}

/** Reads what formatRanges wrote; anything malformed reads as undefined (a peer's annotation is outside input). */
export function parseRanges(text: string | undefined): RangeSet | undefined {
  if (text === undefined) return undefined;
  if (text === '') return EMPTY;
  if (text.length > 64 * 1024) return undefined;
  const out: HashRange[] = [];
  for (const part of text.split(',')) {
    const m = /^([0-9a-f]{1,17})-([0-9a-f]{1,17})$/.exec(part);
    if (!m) return undefined;
    const start = BigInt(`0x${m[1]}`);
    const end = BigInt(`0x${m[2]}`);
    if (start >= end || end > SPACE_END) return undefined;
    out.push({ start, end });
  }
  return rangeSet(out);
}
