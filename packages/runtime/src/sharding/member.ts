import type { Logger } from 'pino';
import type { Client } from '../client/client.js';
import { isAlreadyExists, isConflict, isNotFound } from '../client/errors.js';
import { Lease, type ObjectOf } from '../client/kind.js';
import { systemClock, type Clock } from '../clock/clock.js';
import { LeaderElector } from '../manager/leader-election.js';
import { judgeLease, type ElectionTiming, type Observation } from '../manager/leader-election-state.js';
import { formatAssignment, handOver, holdings, owners, parseAssignment, plan, release, target, UNASSIGNED, type Assignment } from './assignment.js';
import { judgeDepartures, type Departures } from './departures.js';
import { shardHash } from './hash.js';
import { EMPTY, isEmpty, sameRanges, type RangeSet } from './ranges.js';

type LeaseObject = ObjectOf<typeof Lease>;
/** The assignment as read (or just written), with the Lease version it is in. */
type Read = { lease: LeaseObject; assignment: Assignment };

/** The label on each member's Lease: the ring it belongs to. */
export const RING_LABEL = 'opkit.dev/shard-ring';
/** The annotation on the ring's assignment Lease. */
export const ASSIGNMENT_ANNOTATION = 'opkit.dev/shard-assignment';

export interface ShardMemberConfig {
  /** The ring's name (one per sharded operator), e.g. `memcached-operator`. */
  ring: string;
  /** Where the Leases live: the operator's namespace. */
  namespace: string;
  /** This replica's identity (its pod name). */
  identity: string;
  /** Lease timing for the member and coordinator Leases; leader election's defaults (15 s, 10 s, 2 s). */
  timing?: Partial<ElectionTiming>;
  /**
   * A leader-election Lease (in the ring's namespace) whose holder must be gone before this replica
   * joins: the operator's own, so that a rollout from leader election to sharding never has the old
   * leader and the ring at work together. Judged as a candidate judges it (released, or unrenewed
   * for its duration by this replica's clock).
   */
  waitForLeaderLease?: string;
  /**
   * The pod this replica runs in, when it is in the ring's namespace: its member Lease is owned by
   * it, so the garbage collector removes the Lease once the pod is gone (`helm uninstall`, whose
   * RBAC may be gone before the replica could delete it itself; a scale-down; a lost node). A pod
   * object goes only after its processes ended, except when force-deleted: then a replica still
   * running finds its Lease gone at its next renewal, stops at once and takes no further part
   * (`removed`; the manager's liveness check fails, so a kubelet restarts it if its pod remains),
   * and the coordinator gives its parts away only a lease duration after it found the Lease gone.
   */
  pod?: { name: string; uid: string };
}

/**
 * A member's Lease name: the identity made a DNS subdomain (a pod's identity is `name_uid`; a host's
 * may hold capitals), its hash appended when that had to change it, so two identities never share one.
 */
export function memberLeaseName(ring: string, identity: string): string {
  const clean = identity.toLowerCase().replace(/[^a-z0-9.-]/g, '-');
  const name = clean === identity ? `${ring}-member-${clean}` : `${ring}-member-${clean}-${shardHash(identity).toString(16)}`;
  return name.length <= 253 ? name : `${ring}-member-${shardHash(identity).toString(16)}`;
}

/** What a sharded replica's controllers are told. */
export interface ShardListener {
  /**
   * What this replica may reconcile from now on, replacing what it was told before. `fenced`: its
   * Lease was not renewed by the renew deadline (EMPTY): stop in-flight work too, at once.
   */
  onActive(ranges: RangeSet, fenced: boolean): void;
  /** Resolves once nothing of `ranges` is being reconciled or can start (they are no longer active): then they are handed over. */
  drain(ranges: RangeSet, signal: AbortSignal): Promise<void>;
}

/**
 * One replica of a sharded operator (the protocol: assignment.ts, docs/runtime.md "Sharding").
 * It keeps its own Lease (a leader election no one else stands in, so "lost" means its renew
 * deadline passed: it stops all work then, before the Lease can expire in anyone's eyes), stands
 * for the ring's coordinator, follows the assignment, and hands over what it is asked to once
 * drained. The coordinator lists the members' Leases, judges each live or expired on its own
 * monotonic clock (as a leader election judges its Lease), and moves the assignment towards the
 * ring over the members it has seen renew (`target`: a Lease it has seen only once may be a dead
 * replica's, and parts given to it would wait for its expiry).
 */
export class ShardMember {
  private readonly timing: ElectionTiming;
  private readonly clock: Clock;
  /** Counts the times this replica took its Lease back: a read begun in an earlier term is stale. */
  private term = 0;
  private activeRanges: RangeSet = EMPTY;
  /** Each member Lease as this replica last saw it while coordinating, and whether it saw it renewed. */
  private readonly observations = new Map<string, { observed: Observation; renewed: boolean }>();
  /** Owners whose Lease is gone while they may still work, and when they have certainly stopped (departures.ts). */
  private departures: Departures = new Map();
  private readonly member: LeaderElector;
  private readonly coordinator: LeaderElector;

  constructor(
    private readonly client: Client,
    private readonly config: ShardMemberConfig,
    private readonly log: Logger,
    clock: Clock = systemClock,
  ) {
    this.clock = clock;
    this.timing = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, ...config.timing };
    const common = { namespace: config.namespace, identity: config.identity, ...this.timing };
    this.member = new LeaderElector(
      client,
      {
        ...common,
        name: memberLeaseName(config.ring, config.identity),
        labels: { [RING_LABEL]: config.ring },
        ownerReferences: config.pod && [{ apiVersion: 'v1', kind: 'Pod', name: config.pod.name, uid: config.pod.uid }],
        stepDownIfDeleted: true,
      },
      log.child({ component: 'shard-member' }),
      clock,
    );
    this.coordinator = new LeaderElector(client, { ...common, name: `${config.ring}-coordinator` }, log.child({ component: 'shard-coordinator' }), clock);
  }

  /** What this replica may reconcile now. */
  get active(): RangeSet {
    return this.activeRanges;
  }

  /**
   * Why this replica left the ring without being asked to, if it did: its Lease was deleted while
   * it held it (its pod deleted, or someone removing it). It takes no further part: re-joining
   * could race the ring, which may have given its parts away already.
   */
  get removed(): string | undefined {
    return this.member.deletedWhileLeading
      ? `its shard Lease ${memberLeaseName(this.config.ring, this.config.identity)} was deleted while it held it`
      : undefined;
  }

  /**
   * Takes part until `signal` aborts (then leaves the ring at once: its Lease deleted, having
   * stopped), or until removed from it (`removed`).
   */
  async run(signal: AbortSignal, listener: ShardListener): Promise<void> {
    if (this.config.waitForLeaderLease) await this.waitForNoLeader(this.config.waitForLeaderLease, signal);
    // Ends with `signal`, or when this replica is removed from the ring.
    const part = new AbortController();
    const onAbort = () => part.abort(signal.reason);
    if (signal.aborted) return;
    signal.addEventListener('abort', onAbort, { once: true });
    const tell = (ranges: RangeSet, fenced = false) => {
      if (sameRanges(ranges, this.activeRanges) && !fenced) return;
      this.activeRanges = ranges;
      listener.onActive(ranges, fenced);
    };
    // Holding its own Lease is `member.isLeader`; coordinating is `coordinator.isLeader`.
    const memberRun = this.member.run(part.signal, {
      onStartedLeading: () => {
        this.term++;
      },
      // Past the renew deadline (or stopping): nothing more until the Lease is renewed and the
      // assignment read again.
      onStoppedLeading: (reason) => {
        tell(EMPTY, reason === 'lost');
        if (!this.removed) return;
        this.log.error({ reason: this.removed }, 'removed from the shard ring: all work stopped; this replica takes no further part until it restarts');
        part.abort(new Error(this.removed));
      },
    });
    // What it saw while coordinating before is no evidence now: a record that changed since then
    // may have changed long ago.
    const coordinatorRun = this.coordinator.run(part.signal, {
      onStartedLeading: () => {
        this.observations.clear();
        this.departures = new Map();
      },
      onStoppedLeading: () => undefined,
    });
    while (!part.signal.aborted) {
      try {
        const term = this.term;
        // The coordinator follows the assignment it just read or wrote, without reading it again.
        const read = this.coordinator.isLeader ? await this.coordinate(part.signal) : this.member.isLeader ? await this.readAssignment(part.signal) : undefined;
        if (read && this.member.isLeader && term === this.term) await this.follow(read, part.signal, listener, tell);
      } catch (err) {
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- aborted while awaiting (TypeScript#9998)
        if (!part.signal.aborted) this.log.warn({ err: (err as Error).message }, 'shard ring step failed; retrying');
      }
      await this.clock.sleep(this.timing.retryPeriodMs, part.signal);
    }
    signal.removeEventListener('abort', onAbort);
    tell(EMPTY);
    await Promise.all([memberRun, coordinatorRun]);
    await Promise.all([this.removed ? undefined : this.leave(), this.coordinator.release()]);
  }

  /**
   * Leaves the ring, having stopped all work: its Lease deleted (if still its own, and unchanged
   * since read), then its parts given up in the assignment, so the coordinator gives them away at
   * once and nothing is left behind. In that order: with its Lease still there, a coordinator
   * could deal the parts it gave up back to it. Between the two, and when it cannot give them up
   * (the assignment written by others each time, or no longer writable), the coordinator keeps
   * them its own for a lease duration, as a vanished member's (departures.ts).
   */
  private async leave(): Promise<void> {
    const key = { namespace: this.config.namespace, name: memberLeaseName(this.config.ring, this.config.identity) };
    try {
      const lease = await this.client.find(Lease, key);
      if (lease?.spec?.holderIdentity === this.config.identity) {
        await this.client.delete(Lease, key, { preconditions: { resourceVersion: lease.metadata.resourceVersion } });
        this.log.info('left the shard ring');
      }
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, "could not delete this replica's shard Lease; the coordinator removes it once it expires");
    }
    await this.releaseParts();
  }

  /** Gives up every part the assignment names this replica owner of (it stopped all work): a few tries, each over the version read. */
  private async releaseParts(): Promise<void> {
    // A timer of its own, cleared at the end (not AbortSignal.timeout: eslint.config.mjs says why).
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new Error('renew deadline passed')), this.timing.renewDeadlineMs);
    const signal = deadline.signal;
    try {
      for (let attempt = 0; attempt < 5; attempt++) {
        const read = await this.readAssignment(signal);
        if (!owners(read.assignment).has(this.config.identity)) return;
        if (await this.writeAssignment(read.lease, release(read.assignment, this.config.identity), signal)) return;
      }
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'could not give up its shard parts; the coordinator gives them away once a lease duration has passed');
    } finally {
      clearTimeout(timer);
    }
  }

  /** Returns once nobody holds the Lease `name` in this replica's eyes (or it does not exist). */
  private async waitForNoLeader(name: string, signal: AbortSignal): Promise<void> {
    let observed: Observation | undefined;
    let said = false;
    while (!signal.aborted) {
      try {
        const lease = await this.client.withSignal(signal).find(Lease, { namespace: this.config.namespace, name });
        const judged = judgeLease(lease?.spec ?? undefined, this.config.identity, observed, {
          monotonic: this.clock.monotonic(),
          wall: this.clock.now(),
          timing: this.timing,
        });
        observed = judged.observed;
        if (!lease || judged.verdict.verdict !== 'held') {
          if (said) this.log.info({ lease: name }, 'the leader is gone; joining the shard ring');
          return;
        }
        if (!said) {
          said = true;
          this.log.info(
            { lease: name, holder: lease.spec?.holderIdentity },
            'a leader-elected replica of this operator still holds its Lease (a rollout from leader election to sharding): joining the shard ring once it is gone',
          );
        }
      } catch (err) {
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- aborted while awaiting (TypeScript#9998)
        if (!signal.aborted) this.log.warn({ err: (err as Error).message }, 'could not read the leader Lease; retrying');
      }
      await this.clock.sleep(this.timing.retryPeriodMs, signal);
    }
  }

  private assignmentKey() {
    return { namespace: this.config.namespace, name: `${this.config.ring}-shards` };
  }

  /** The assignment and its Lease (created unassigned when missing). */
  private async readAssignment(signal: AbortSignal): Promise<Read> {
    const client = this.client.withSignal(signal);
    let lease = await client.find(Lease, this.assignmentKey());
    if (!lease) {
      try {
        lease = await client.create(Lease, {
          metadata: { ...this.assignmentKey(), annotations: { [ASSIGNMENT_ANNOTATION]: formatAssignment(UNASSIGNED) } },
          spec: {},
        } as LeaseObject);
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
        lease = await client.get(Lease, this.assignmentKey());
      }
    }
    const text = lease.metadata.annotations?.[ASSIGNMENT_ANNOTATION];
    // Made by the chart (so that `helm uninstall` removes it) and not written yet: nothing assigned.
    if (text === undefined) return { lease, assignment: UNASSIGNED };
    const assignment = parseAssignment(text);
    if (!assignment) {
      // Written by something else: nobody owns anything until the coordinator rewrites it.
      this.log.error({ lease: `${this.config.namespace}/${lease.metadata.name}` }, 'the shard assignment is malformed; treating every part as unassigned');
      return { lease, assignment: UNASSIGNED };
    }
    return { lease, assignment };
  }

  /** Writes an assignment over the version read; undefined when someone else wrote first (read again). */
  private async writeAssignment(lease: LeaseObject, next: Assignment, signal: AbortSignal): Promise<LeaseObject | undefined> {
    try {
      return await this.client.withSignal(signal).update(Lease, {
        ...lease,
        metadata: { ...lease.metadata, annotations: { ...lease.metadata.annotations, [ASSIGNMENT_ANNOTATION]: formatAssignment(next) } },
      } as LeaseObject);
    } catch (err) {
      if (isConflict(err) || isNotFound(err)) return undefined;
      throw err;
    }
  }

  /**
   * The members whose Lease is held in this replica's eyes (`alive`: record changed within its
   * duration, by this replica's clock; a Lease first seen counts from then; and owners in
   * `assignment` whose Lease vanished while they may still work, departures.ts), and those among
   * them it has seen renew (`proven`: the record changed between two of its reads, or is its own).
   */
  private async members(assignment: Assignment, signal: AbortSignal): Promise<{ alive: Set<string>; proven: Set<string> }> {
    // Judged as of before the LIST: an answer that comes late must not make a renewal look old.
    const at = this.clock.monotonic();
    const wall = this.clock.now();
    const leases = await this.client
      .withSignal(signal)
      .listAll(Lease, { namespace: this.config.namespace, labelSelector: `${RING_LABEL}=${this.config.ring}` });
    // A Lease gone is judged as of after the LIST: its holder may have renewed until then.
    const listedAt = this.clock.monotonic();
    const expired = new Set<string>();
    const alive = new Set<string>();
    const proven = new Set<string>();
    if (this.member.isLeader) proven.add(this.config.identity);
    const seen = new Set<string>();
    for (const lease of leases) {
      const name = lease.metadata.name!;
      seen.add(name);
      const before = this.observations.get(name);
      // Judged as a candidate judges a leader's Lease: '' is no member's identity, so nothing is "mine".
      const { observed, verdict } = judgeLease(lease.spec ?? undefined, '', before?.observed, { monotonic: at, wall, timing: this.timing });
      const holder = lease.spec?.holderIdentity;
      const held = verdict.verdict === 'held' && !!holder;
      const renewed = held && (before?.renewed || (before !== undefined && before.observed.record !== observed.record));
      this.observations.set(name, { observed, renewed });
      if (!held) {
        if (holder) expired.add(holder);
        await this.removeExpired(lease, signal);
        continue;
      }
      alive.add(holder);
      if (renewed) proven.add(holder);
    }
    for (const name of this.observations.keys()) if (!seen.has(name)) this.observations.delete(name);
    const before = this.departures;
    const { departures, holding } = judgeDepartures(before, {
      at: listedAt,
      held: alive,
      expired,
      owners: owners(assignment),
      leaseDurationMs: this.timing.leaseDurationMs,
    });
    this.departures = departures;
    for (const m of holding) {
      alive.add(m);
      // Also seen for a moment whenever a replica leaves (its Lease goes first, then its parts).
      if (!before.has(m))
        this.log.info(
          { member: m, leaseDurationMs: this.timing.leaseDurationMs },
          "a shard member's Lease is gone while the assignment names it owner: its parts stay its own until it gives them up or a lease duration has passed (a force-deleted pod's replica may still be working)",
        );
    }
    return { alive, proven };
  }

  /**
   * Deletes a member Lease that expired (or was released) in this coordinator's eyes: its replica
   * stopped all work by its renew deadline, so its parts are given away and its Lease is only
   * litter (a SIGKILLed pod's; each pod's identity is new). Conditional on the version judged: one
   * renewed meanwhile stays. A replica that comes back makes its Lease again and reads the
   * assignment before it works.
   */
  private async removeExpired(lease: LeaseObject, signal: AbortSignal): Promise<void> {
    try {
      await this.client
        .withSignal(signal)
        .delete(
          Lease,
          { namespace: this.config.namespace, name: lease.metadata.name! },
          { preconditions: { resourceVersion: lease.metadata.resourceVersion } },
        );
      this.observations.delete(lease.metadata.name!);
      this.log.info({ lease: lease.metadata.name, holder: lease.spec?.holderIdentity }, 'removed an expired shard member Lease');
    } catch (err) {
      if (!isNotFound(err) && !isConflict(err)) throw err;
    }
  }

  /** Moves the assignment towards the ring over the live members; returns it as it now stands. */
  private async coordinate(signal: AbortSignal): Promise<Read> {
    const read = await this.readAssignment(signal);
    const { alive, proven } = await this.members(read.assignment, signal);
    const next = plan(read.assignment, target(read.assignment, proven, alive), alive);
    if (formatAssignment(next) === read.lease.metadata.annotations?.[ASSIGNMENT_ANNOTATION]) return read;
    const written = await this.writeAssignment(read.lease, next, signal);
    if (!written) return this.readAssignment(signal);
    const unjudged = [...alive].filter((m) => !proven.has(m)).sort();
    this.log.info(
      { members: [...proven].sort(), ...(unjudged.length ? { unjudged } : {}), moving: next.filter((s) => s.next).length },
      'shard assignment updated',
    );
    return { lease: written, assignment: next };
  }

  /**
   * Reconciles what `read` gives this replica, and hands over what it is asked to once drained.
   * The caller checked the read began in this Lease term: one begun before the Lease was lost (and
   * taken back) may name parts given away since.
   */
  private async follow(read: Read, signal: AbortSignal, listener: ShardListener, tell: (r: RangeSet) => void): Promise<void> {
    const { lease, assignment } = read;
    const { active, handingOver } = holdings(assignment, this.config.identity);
    tell(active);
    if (isEmpty(handingOver)) return;
    await listener.drain(handingOver, signal);
    if (await this.writeAssignment(lease, handOver(assignment, this.config.identity, handingOver), signal))
      this.log.info({ parts: handingOver.length }, 'handed shard parts over, drained');
  }
}
