/*
 * When a member whose Lease is gone has certainly stopped, in the coordinator's eyes. A member
 * Lease goes three ways:
 *  - its replica left: it stopped all work, gave its parts up in the assignment (`release`), then
 *    deleted its Lease, so the assignment no longer names it;
 *  - the coordinator removed it, expired: its replica stopped at its renew deadline, before that;
 *  - something else deleted it while its replica held it: the garbage collector once the pod was
 *    force-deleted (its process may still run on a node), or a person. Its replica may still be
 *    working: it learns at its next renewal (stepDownIfDeleted) or stops at its renew deadline.
 * Its last renewal came before the coordinator found the Lease gone, so it has stopped within a
 * renew deadline (less than a lease duration) of that. Until a lease duration has passed since,
 * on the coordinator's monotonic clock, what the assignment says it owns stays its own: given to
 * another replica at once, it would be reconciled twice (found by CI, member.int.test.ts).
 */

export interface DepartureReading {
  /** Monotonic ms, read after the LIST of member Leases returned. */
  at: number;
  /** The members whose Lease is held in the coordinator's eyes. */
  held: ReadonlySet<string>;
  /** The members whose Lease the coordinator found expired (and removes). */
  expired: ReadonlySet<string>;
  /** The members the assignment names as owner of some part. */
  owners: ReadonlySet<string>;
  leaseDurationMs: number;
}

/** For each owner without a held Lease, when it has certainly stopped (monotonic ms). */
export type Departures = ReadonlyMap<string, number>;

/**
 * One step: the departures as they stand now (only owners without a held Lease are kept), and the
 * owners that may still be working (`holding`), whom the coordinator counts live: it leaves their
 * parts where they are and gives them nothing new. Pure: member.ts calls it at each step.
 */
export function judgeDepartures(before: Departures, r: DepartureReading): { departures: Map<string, number>; holding: Set<string> } {
  const departures = new Map<string, number>();
  const holding = new Set<string>();
  for (const m of r.owners) {
    if (r.held.has(m)) continue;
    const stoppedBy = r.expired.has(m) ? r.at : (before.get(m) ?? r.at + r.leaseDurationMs);
    departures.set(m, stoppedBy);
    if (stoppedBy > r.at) holding.add(m);
  }
  return { departures, holding };
}
