import { shardHash } from './hash.js';
import { overlaps, rangeSet, SPACE_END, type RangeSet } from './ranges.js';

/*
 * Who reconciles which part of the hash space, and how a part changes hands without two replicas
 * ever reconciling it at once. The invariant (docs/runtime.md, "Sharding"): every point of the
 * hash space has at most one owner in the assignment, and a replica reconciles a point only while
 * the assignment names it owner with no handover pending. The assignment lives in one object (the
 * ring's Lease), written with resourceVersion preconditions, so it has one value at a time. A part
 * moves from a live owner in two steps: the coordinator marks it `next: B`; the owner stops and
 * drains it, then writes B as its owner. B starts once it reads that. A dead owner's parts (its
 * Lease unrenewed for the lease duration; it stopped itself at its renew deadline, sooner) are
 * given away directly. All functions here are pure; assignment.test.ts holds the table and the
 * randomized runs that check the invariant under joins, leaves, kills and any interleaving.
 */

/** One part of the hash space [start, end): its owner, and the replica it is being handed to. */
export interface Slice {
  start: bigint;
  end: bigint;
  owner?: string;
  next?: string;
}

/** Slices sorted, covering [0, 2^64) exactly, neighbours with equal (owner, next) merged. */
export type Assignment = readonly Slice[];

export const UNASSIGNED: Assignment = [{ start: 0n, end: SPACE_END }];

/**
 * The hash space is dealt in this many equal buckets: with 3 replicas each gets a third ± 3 % (one
 * standard deviation), in about 60 ranges after neighbours merge (the shard selector names each).
 */
export const BUCKETS = 256;

/**
 * Which member reconciles which bucket: rendezvous (highest-random-weight) hashing, each bucket
 * to the member with the highest hash of (member, bucket). A member joining takes only the buckets
 * it wins, a member leaving gives away only its own, and the same members give the same
 * assignment on every replica, in any order.
 */
export function ring(members: readonly string[], buckets = BUCKETS): Assignment {
  const unique = [...new Set(members)];
  if (!unique.length) return UNASSIGNED;
  const width = SPACE_END / BigInt(buckets);
  const slices: Slice[] = [];
  for (let b = 0; b < buckets; b++) {
    let best = unique[0]!;
    let bestWeight = -1n;
    for (const m of unique) {
      const w = mix(shardHash(`${m}/${b}`));
      if (w > bestWeight || (w === bestWeight && m < best)) [best, bestWeight] = [m, w];
    }
    slices.push({ start: BigInt(b) * width, end: b === buckets - 1 ? SPACE_END : BigInt(b + 1) * width, owner: best });
  }
  return normalize(slices);
}

/**
 * MurmurHash3's 64-bit finalizer: FNV-1a alone leaves names that differ in one character with
 * weights that rank alike in every bucket (one member won none of 256). Only the weights use it;
 * objects are placed by the API server's own hash.
 */
function mix(h: bigint): bigint {
  const M = (1n << 64n) - 1n;
  h ^= h >> 33n;
  h = (h * 0xff51afd7ed558ccdn) & M;
  h ^= h >> 33n;
  h = (h * 0xc4ceb9fe1a85ec53n) & M;
  return h ^ (h >> 33n);
}

/** Sorted, empty slices dropped, equal neighbours merged. */
export function normalize(slices: readonly Slice[]): Assignment {
  const out: Slice[] = [];
  for (const s of [...slices].sort((a, b) => (a.start < b.start ? -1 : 1))) {
    if (s.start >= s.end) continue;
    const last = out[out.length - 1];
    if (last && last.end === s.start && last.owner === s.owner && last.next === s.next) last.end = s.end;
    else out.push({ ...s });
  }
  return out;
}

/** The slices of `a` cut wherever `b` has a boundary, each with what `a` and `b` say of it. */
function overlay(a: Assignment, b: Assignment): { start: bigint; end: bigint; now: Slice; want: Slice }[] {
  return overlaps(a, b).map(({ start, end, a: now, b: want }) => ({ start, end, now, want }));
}

/**
 * Where the coordinator steers: the ring over the members it has seen renew their Lease
 * (`proven`), except that what a member it cannot judge yet owns stays where it is. A Lease seen
 * for the first time is held for all a coordinator can tell (it trusts no other clock, so it counts
 * a lease duration from its own first sight), though its holder may have died long ago; a
 * coordinator that just took over sees every Lease for the first time. Steering by the live set
 * would hand parts to such a member and leave them unreconciled until its Lease expires in the new
 * coordinator's eyes. Parts therefore move only to members seen running; a live member's share
 * comes to it once it is seen renewing (one retry period), through the usual handover.
 */
export function target(current: Assignment, proven: ReadonlySet<string>, alive: ReadonlySet<string>, buckets = BUCKETS): Assignment {
  return normalize(
    overlay(current, ring([...proven], buckets)).map(({ start, end, now, want }) =>
      now.owner !== undefined && alive.has(now.owner) && !proven.has(now.owner) ? { start, end, owner: now.owner } : { start, end, owner: want.owner },
    ),
  );
}

/**
 * The coordinator's step: from the current assignment towards `desired` (a ring over the live
 * members). A part whose owner is live and is not the desired one is marked for handover (`next`);
 * a part with no owner, or a dead one, goes to the desired owner at once; a part already where it
 * should be loses any pending handover.
 */
export function plan(current: Assignment, desired: Assignment, live: ReadonlySet<string>): Assignment {
  return normalize(
    overlay(current, desired).map(({ start, end, now, want }) => {
      if (now.owner === want.owner) return { start, end, owner: now.owner };
      if (now.owner === undefined || !live.has(now.owner)) return { start, end, owner: want.owner };
      return { start, end, owner: now.owner, next: want.owner };
    }),
  );
}

/** What `member` may reconcile (owner, nothing pending) and what it must stop and hand over. */
export function holdings(a: Assignment, member: string): { active: RangeSet; handingOver: RangeSet } {
  const mine = a.filter((s) => s.owner === member);
  return {
    active: rangeSet(mine.filter((s) => s.next === undefined)),
    handingOver: rangeSet(mine.filter((s) => s.next !== undefined)),
  };
}

/**
 * The owner's step once it has stopped and drained `drained` (no reconcile of a key in it is in
 * flight or will start): those of its parts marked for handover now belong to their `next`.
 */
export function handOver(a: Assignment, member: string, drained: RangeSet): Assignment {
  const cut = overlay(a, normalize([...complement(drained).map((r) => ({ ...r, owner: 'keep' })), ...drained.map((r) => ({ ...r, owner: 'give' }))]));
  return normalize(
    cut.map(({ start, end, now, want }) =>
      want.owner === 'give' && now.owner === member && now.next !== undefined
        ? { start, end, owner: now.next }
        : { start, end, owner: now.owner, next: now.next },
    ),
  );
}

/**
 * A leaving member's step, once it has stopped all work: each of its parts goes to its `next`
 * where a handover was pending, else to nobody (the coordinator deals it at its next step). Done
 * right after its Lease goes: until then the coordinator keeps the parts of an owner whose Lease
 * vanished, as it may still be working (departures.ts).
 */
export function release(a: Assignment, member: string): Assignment {
  return normalize(a.map((s) => (s.owner === member ? { start: s.start, end: s.end, owner: s.next } : s)));
}

/** The members that own some part of `a`. */
export function owners(a: Assignment): Set<string> {
  return new Set(a.flatMap((s) => (s.owner === undefined ? [] : [s.owner])));
}

function complement(set: RangeSet): RangeSet {
  const out: { start: bigint; end: bigint }[] = [];
  let at = 0n;
  for (const r of set) {
    if (r.start > at) out.push({ start: at, end: r.start });
    at = r.end;
  }
  if (at < SPACE_END) out.push({ start: at, end: SPACE_END });
  return out;
}

/** Checks the form (sorted, contiguous, covering the space) of an assignment read from the API. */
export function isAssignment(a: readonly Slice[]): boolean {
  if (!a.length || a[0]!.start !== 0n || a[a.length - 1]!.end !== SPACE_END) return false;
  return a.every((s, i) => s.start < s.end && (i === 0 || a[i - 1]!.end === s.start));
}

/** How an assignment is kept in the ring Lease's annotation: JSON rows of hex start, hex end, owner, next. */
export function formatAssignment(a: Assignment): string {
  return JSON.stringify(a.map((s) => [s.start.toString(16), s.end.toString(16), s.owner ?? '', s.next ?? '']));
}

/**
 * Reads what formatAssignment wrote; undefined for anything else (an annotation anyone with
 * `update` on Leases in the namespace could have written: never trusted to be well formed).
 */
export function parseAssignment(text: string | undefined): Assignment | undefined {
  if (text === undefined || text.length > 256 * 1024) return undefined;
  let rows: unknown;
  try {
    rows = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(rows) || rows.length > 4096) return undefined;
  const slices: Slice[] = [];
  for (const row of rows) {
    if (!Array.isArray(row) || row.length !== 4 || !row.every((c) => typeof c === 'string')) return undefined;
    const [start, end, owner, next] = row as [string, string, string, string];
    if (!/^[0-9a-f]{1,17}$/.test(start) || !/^[0-9a-f]{1,17}$/.test(end) || owner.length > 253 || next.length > 253) return undefined;
    slices.push({ start: BigInt(`0x${start}`), end: BigInt(`0x${end}`), owner: owner || undefined, next: (owner && next) || undefined });
  }
  return isAssignment(slices) ? normalize(slices) : undefined;
}
