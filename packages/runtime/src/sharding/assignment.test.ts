import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  formatAssignment,
  handOver,
  holdings,
  isAssignment,
  owners,
  parseAssignment,
  plan,
  release,
  ring,
  target,
  UNASSIGNED,
  type Assignment,
} from './assignment.js';
import { EMPTY, intersect, isEmpty, SPACE_END, share, subtract, union, WHOLE, type RangeSet } from './ranges.js';

const shareOf = (a: Assignment, m: string) => share(holdings(a, m).active);

describe('the ring', () => {
  it('covers the hash space, the same for the same members in any order', () => {
    const a = ring(['r-0', 'r-1', 'r-2']);
    expect(isAssignment(a)).toBe(true);
    expect(ring(['r-2', 'r-0', 'r-1'])).toEqual(a);
    expect(owners(a)).toEqual(new Set(['r-0', 'r-1', 'r-2']));
  });

  it('gives each of 3 replicas a third, give or take', () => {
    const a = ring(['memcached-operator-0', 'memcached-operator-1', 'memcached-operator-2']);
    for (const m of ['memcached-operator-0', 'memcached-operator-1', 'memcached-operator-2']) {
      expect(shareOf(a, m)).toBeGreaterThan(0.25);
      expect(shareOf(a, m)).toBeLessThan(0.42);
    }
  });

  it('moves only what a joining replica takes: the others keep the rest of what they had', () => {
    const before = ring(['a', 'b']);
    const after = ring(['a', 'b', 'c']);
    for (const m of ['a', 'b']) {
      const lost = subtract(holdings(before, m).active, holdings(after, m).active);
      expect(isEmpty(subtract(lost, holdings(after, 'c').active))).toBe(true);
    }
    expect(ring([])).toEqual(UNASSIGNED);
  });
});

describe('handing parts over', () => {
  const twoOwners = ring(['a', 'b']);
  const withC = ring(['a', 'b', 'c']);
  const cTakes = holdings(withC, 'c').active;

  it('marks what a live owner must give up, instead of giving it away', () => {
    const planned = plan(twoOwners, withC, new Set(['a', 'b', 'c']));
    expect(holdings(planned, 'c').active).toEqual(EMPTY);
    expect(union(holdings(planned, 'a').handingOver, holdings(planned, 'b').handingOver)).toEqual(cTakes);
  });

  it("gives a dead owner's parts away at once", () => {
    const planned = plan(twoOwners, ring(['a', 'c']), new Set(['a', 'c']));
    const bHad = holdings(twoOwners, 'b').active;
    expect(holdings(planned, 'b')).toEqual({ active: EMPTY, handingOver: EMPTY });
    // Each of b's parts is reconciled by its new owner at once: no handover waits on the dead.
    expect(intersect(bHad, union(holdings(planned, 'a').handingOver, holdings(planned, 'c').handingOver))).toEqual(EMPTY);
    expect(subtract(bHad, union(holdings(planned, 'a').active, holdings(planned, 'c').active))).toEqual(EMPTY);
    // What the live a must give c waits for a.
    expect(holdings(planned, 'a').handingOver).toEqual(intersect(holdings(twoOwners, 'a').active, holdings(ring(['a', 'c']), 'c').active));
  });

  it('moves a part only once its owner says it has drained it, and only that part', () => {
    const planned = plan(twoOwners, withC, new Set(['a', 'b', 'c']));
    const aGives = holdings(planned, 'a').handingOver;
    const afterA = handOver(planned, 'a', aGives);
    expect(holdings(afterA, 'c').active).toEqual(aGives);
    expect(holdings(afterA, 'b').handingOver).toEqual(holdings(planned, 'b').handingOver);
    // b's own step, with nothing drained, changes nothing.
    expect(handOver(afterA, 'b', EMPTY)).toEqual(afterA);
  });

  it('drops a pending handover when the ring changes back', () => {
    const planned = plan(twoOwners, withC, new Set(['a', 'b', 'c']));
    expect(plan(planned, twoOwners, new Set(['a', 'b']))).toEqual(twoOwners);
  });

  it("moves parts only to members seen running: a new coordinator leaves an unjudged member's parts where they are and gives it nothing", () => {
    // c left gracefully (its Lease released); b was killed long ago, but the coordinator (a) took
    // over just now and has seen b's Lease once: held, for all it can tell. Only a is seen renewing.
    const current = plan(ring(['a', 'c']), ring(['a', 'c']), new Set(['a', 'c']));
    const alive = new Set(['a', 'b']);
    const next = plan(current, target(current, new Set(['a']), alive), alive);
    expect(holdings(next, 'a')).toEqual({ active: WHOLE, handingOver: EMPTY });
    expect(holdings(next, 'b')).toEqual({ active: EMPTY, handingOver: EMPTY });
    // b, once seen renewing, gets its share through the handover.
    const proven = plan(next, target(next, new Set(['a', 'b']), alive), alive);
    expect(holdings(proven, 'a').handingOver).toEqual(holdings(ring(['a', 'b']), 'b').active);
    // A member owning parts and not yet seen renewing keeps them, with no handover asked of it.
    const bOwns = ring(['a', 'b']);
    expect(plan(bOwns, target(bOwns, new Set(['a']), alive), alive)).toEqual(bOwns);
  });

  it('reads back what it writes, and nothing malformed', () => {
    const planned = plan(twoOwners, withC, new Set(['a', 'b', 'c']));
    expect(parseAssignment(formatAssignment(planned))).toEqual(planned);
    expect(parseAssignment('[["0","5","a",""]]')).toBeUndefined(); // does not cover the space
    expect(parseAssignment(`[["0","${SPACE_END.toString(16)}","a",""],["0","1","b",""]]`)).toBeUndefined();
    expect(parseAssignment('{"a":1}')).toBeUndefined();
    expect(parseAssignment('not json')).toBeUndefined();
  });
});

/*
 * The protocol, run against itself: replicas join, leave, are killed or cut off from the API
 * server, the coordinator re-plans, replicas read and hand over, in any order fast-check picks.
 * After every step no point of the hash space is reconciled by two replicas. The timing
 * assumption of leases is an enabling condition: a replica counts as dead only once it has stopped
 * working (killed, left, or past its own renew deadline, which comes before its lease expires).
 */
interface Replica {
  /** The process runs and can reach the API server. */
  connected: boolean;
  /** Its Lease is current (the coordinator counts it live). */
  live: boolean;
  /** Its Lease exists (deleted: it left, or someone deleted it under it). */
  lease: boolean;
  /** What it is reconciling now: the ground truth the invariant is about. */
  working: RangeSet;
  /** The assignment as it last read it, and that read's version; undefined: it must read first. */
  view?: { a: Assignment; version: number };
}

type Step =
  | { do: 'join' | 'leave' | 'quit' | 'remove' | 'kill' | 'cut' | 'fence' | 'expire' | 'heal' | 'read' | 'handOver' | 'renew'; who: number }
  | { do: 'coordinate' }
  | { do: 'failover' };

function simulate(steps: Step[]) {
  const names = ['r0', 'r1', 'r2', 'r3'];
  const replicas = new Map<string, Replica>();
  let assignment: Assignment = UNASSIGNED;
  let version = 0;
  const write = (a: Assignment) => {
    assignment = a;
    version++;
  };
  const check = () => {
    const list = [...replicas.entries()];
    for (const [i, [m, x]] of list.entries())
      for (const [n, y] of list.slice(i + 1)) if (!isEmpty(intersect(x.working, y.working))) throw new Error(`${m} and ${n} both reconcile part of the space`);
  };
  // A member whose Lease is gone counts live while the assignment names it owner, until its
  // departure expires (departures.ts); one it no longer names is gone at once.
  const liveSet = () => new Set([...replicas].filter(([m, r]) => r.live && (r.lease || owners(assignment).has(m))).map(([m]) => m));
  // The coordinator's knowledge: a Lease is live until it expires (a killed replica's too), and a
  // member is proven once the coordinator has seen it renew. A new coordinator has seen nobody.
  const proven = new Set<string>();
  const act = (s: Step) => {
    if (s.do === 'coordinate') {
      const live = liveSet();
      const seen = new Set([...proven].filter((m) => live.has(m)));
      write(plan(assignment, target(assignment, seen, live, 16), live));
      return;
    }
    if (s.do === 'failover') {
      proven.clear();
      return;
    }
    const name = names[s.who % names.length]!;
    const r = replicas.get(name);
    switch (s.do) {
      case 'join':
        if (!r) replicas.set(name, { connected: true, live: true, lease: true, working: EMPTY });
        return;
      case 'leave': // graceful: stops and drains everything, gives its parts up, then deletes its Lease
      case 'quit': // the same, its parts not given up (the assignment not writable): they wait for its departure
      case 'kill': // SIGKILL: stops at once; its Lease expires later
        if (!r) return;
        r.working = EMPTY;
        r.connected = false;
        r.view = undefined;
        if (s.do === 'leave') {
          write(release(assignment, name));
          replicas.delete(name);
        }
        if (s.do === 'quit') r.lease = false;
        return;
      case 'remove': // its Lease deleted under it (a force-deleted pod's, by the garbage collector): it works on
        if (!r?.lease) return;
        r.lease = false;
        proven.delete(name);
        return;
      case 'cut': // partitioned from the API server: keeps working on what it has, for now
        if (r) r.connected = false;
        return;
      case 'fence': // its renew deadline passed without a renewal: it stops everything
        if (r && !r.connected) {
          r.working = EMPTY;
          r.view = undefined;
        }
        return;
      case 'expire': // the lease duration passed: only after the replica stopped (renew deadline < lease duration)
        if (r && !r.connected && isEmpty(r.working)) {
          r.live = false;
          proven.delete(name);
          // Removed from the ring: it takes no further part (a restart joins anew).
          if (!r.lease) replicas.delete(name);
        }
        return;
      case 'renew': // it renews its Lease, which the coordinator sees; or finds it gone and stops at once
        if (!r?.connected) return;
        if (r.lease) proven.add(name);
        else {
          r.working = EMPTY;
          r.view = undefined;
          r.connected = false;
        }
        return;
      case 'heal':
        if (r?.lease && !r.connected && isEmpty(r.working)) {
          r.connected = true;
          r.live = true;
        }
        return;
      case 'read': {
        if (!r?.connected) return;
        r.view = { a: assignment, version };
        const { active } = holdings(assignment, name);
        // Stops what it no longer may reconcile, starts what it may.
        r.working = active;
        return;
      }
      case 'handOver': {
        if (!r?.connected || !r.view) return;
        const { handingOver } = holdings(r.view.a, name);
        // It stopped those parts when it read the view (working never holds them); the write is
        // conditional on the version it read, as an update with its resourceVersion is.
        if (isEmpty(handingOver) || r.view.version !== version) return;
        if (!isEmpty(intersect(r.working, handingOver))) throw new Error(`${name} hands over what it still reconciles`);
        write(handOver(assignment, name, handingOver));
        r.view = { a: assignment, version };
        return;
      }
    }
  };
  for (const s of steps) {
    const before = assignment;
    act(s);
    check();
    if (s.do === 'coordinate') movesOnlyToProven(before, assignment, proven);
  }
  return { replicas, act, check, assignment: () => assignment, liveSet };
}

/** A coordinator's write gives a part (or asks for its handover) only to a member it has seen renew. */
function movesOnlyToProven(before: Assignment, after: Assignment, proven: ReadonlySet<string>) {
  for (const s of after) {
    const was = before.filter((b) => b.start < s.end && s.start < b.end);
    const gained = s.owner !== undefined && was.some((b) => b.owner !== s.owner);
    if (gained && !proven.has(s.owner!)) throw new Error(`${s.owner} was given a part before it was seen running`);
    if (s.next !== undefined && !proven.has(s.next) && !was.every((b) => b.next === s.next))
      throw new Error(`${s.next} was promised a part before it was seen running`);
  }
}

const who = fc.integer({ min: 0, max: 3 });
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ do: 'coordinate' as const }) },
  { weight: 1, arbitrary: fc.constant({ do: 'failover' as const }) },
  { weight: 3, arbitrary: who.map((w) => ({ do: 'renew' as const, who: w })) },
  { weight: 4, arbitrary: who.map((w) => ({ do: 'read' as const, who: w })) },
  { weight: 3, arbitrary: who.map((w) => ({ do: 'handOver' as const, who: w })) },
  {
    weight: 3,
    arbitrary: fc
      .tuple(
        fc.constantFrom(
          'join' as const,
          'leave' as const,
          'quit' as const,
          'remove' as const,
          'kill' as const,
          'cut' as const,
          'fence' as const,
          'expire' as const,
          'heal' as const,
        ),
        who,
      )
      .map(([d, w]) => ({ do: d, who: w })),
  },
);

describe('the handover protocol, under joins, leaves, kills, partitions and any interleaving', () => {
  const settled: Step[] = [
    { do: 'join', who: 0 },
    { do: 'join', who: 1 },
    { do: 'renew', who: 0 },
    { do: 'renew', who: 1 },
    { do: 'coordinate' },
    { do: 'read', who: 0 },
    { do: 'read', who: 1 },
  ];

  it("keeps a member's parts its own while its Lease is gone and it may still work, then gives them away", () => {
    const sim = simulate([...settled, { do: 'remove', who: 1 }, { do: 'coordinate' }, { do: 'read', who: 0 }]);
    expect(holdings(sim.assignment(), 'r0').active).not.toEqual(WHOLE);
    // It finds out at its next renewal and stops; once its departure expires, r0 gets everything.
    sim.act({ do: 'renew', who: 1 });
    sim.act({ do: 'expire', who: 1 });
    sim.act({ do: 'coordinate' });
    sim.act({ do: 'read', who: 0 });
    expect(sim.replicas.get('r0')!.working).toEqual(WHOLE);
  });

  it('gives up the parts of a member that left at once, and waits for one that could not give them up', () => {
    const left = simulate([...settled, { do: 'leave', who: 1 }, { do: 'coordinate' }, { do: 'read', who: 0 }]);
    expect(left.replicas.get('r0')!.working).toEqual(WHOLE);
    const quit = simulate([...settled, { do: 'quit', who: 1 }, { do: 'coordinate' }, { do: 'read', who: 0 }]);
    expect(quit.replicas.get('r0')!.working).not.toEqual(WHOLE);
  });

  it('never has two replicas reconcile the same part of the hash space', () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 10, maxLength: 80, size: 'max' }), (steps) => {
        simulate([{ do: 'join', who: 0 }, { do: 'join', who: 1 }, ...steps]);
      }),
      { numRuns: 300 },
    );
  });

  it('converges once the faults stop: the live replicas reconcile the whole space, split as the ring says', () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 10, maxLength: 60, size: 'max' }), (steps) => {
        const sim = simulate([{ do: 'join', who: 0 }, ...steps]);
        // Faults stop: every replica still cut off stops, expires and comes back; one whose Lease
        // was deleted finds out at its renewal, stops and departs.
        for (const [m, r] of sim.replicas) {
          const i = Number(m.slice(1));
          if (!r.lease) for (const d of ['renew', 'fence', 'expire'] as const) sim.act({ do: d, who: i });
          else if (!r.connected) for (const d of ['fence', 'expire', 'heal'] as const) sim.act({ do: d, who: i });
        }
        // Rounds of renew, coordinate, read, hand over, read.
        for (let round = 0; round < 3; round++) {
          for (const m of sim.replicas.keys()) sim.act({ do: 'renew', who: Number(m.slice(1)) });
          sim.act({ do: 'coordinate' });
          for (const m of sim.replicas.keys()) sim.act({ do: 'read', who: Number(m.slice(1)) });
          for (const m of sim.replicas.keys()) {
            sim.act({ do: 'handOver', who: Number(m.slice(1)) });
            sim.act({ do: 'read', who: Number(m.slice(1)) });
          }
          sim.check();
        }
        const live = sim.liveSet();
        if (!live.size) return;
        expect(sim.assignment()).toEqual(ring([...live], 16));
        const covered = [...sim.replicas.values()].reduce<RangeSet>((u, r) => union(u, r.working), EMPTY);
        expect(covered).toEqual(WHOLE);
      }),
      { numRuns: 200 },
    );
  });
});
