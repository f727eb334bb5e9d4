import type { Logger } from 'pino';
import type { Client } from '../client/client.js';
import { isAlreadyExists, isConflict, isNotFound } from '../client/errors.js';
import { Lease } from '../client/kind.js';
import { systemClock, type Clock } from '../clock/clock.js';
import {
  electorStep,
  initialElectorState,
  judgeLease,
  type ElectionTiming,
  type ElectorEvent,
  type ElectorState,
  type ElectorTransition,
} from './leader-election-state.js';
import type { ObjectOf } from '../client/kind.js';

type LeaseObject = ObjectOf<typeof Lease>;

export interface LeaderElectionConfig {
  /** Lease name, e.g. `memcached-operator-leader`. */
  name: string;
  namespace: string;
  /** This replica's identity (pod name plus a random suffix). */
  identity: string;
  /** How long a lease is valid without renewal. Default 15 s. */
  leaseDurationMs?: number;
  /** How long the leader keeps retrying a failing renewal before giving up leadership. Default 10 s. */
  renewDeadlineMs?: number;
  /** How often candidates try to acquire and the leader renews. Default 2 s. */
  retryPeriodMs?: number;
  /** Labels the Lease is created with (a shard ring lists its members' Leases by them). */
  labels?: Record<string, string>;
  /** Owners the Lease is created with (a shard member's: its pod, so the Lease goes with the pod). */
  ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string }[];
  /**
   * A leader whose Lease was deleted steps down at once (`deletedWhileLeading`) instead of re-making
   * it and going on: a shard member's Lease deleted means the ring may already have given its parts
   * away. client-go's leader election simply re-creates it.
   */
  stepDownIfDeleted?: boolean;
}

/**
 * The Lease API wants MicroTime: RFC 3339 with exactly six fractional digits. A plain
 * `Date#toISOString()` has three, which the API server rejects for acquireTime and renewTime.
 */
export const microTime = (d: Date = new Date()): string => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

export interface LeadershipCallbacks {
  /** This replica leads from now on: start the work. */
  onStartedLeading(): void;
  /** It no longer does (lost, or stopping): stop acting at once. */
  onStoppedLeading(reason: 'lost' | 'stopped'): void;
}

/**
 * Lease-based leader election, the protocol of client-go and controller-runtime. The decisions are
 * `judgeLease` and `electorStep` (leader-election-state.ts, pure and table-tested, on monotonic
 * time); this class reads and writes the Lease and runs the timers they ask for.
 */
export class LeaderElector {
  private state: ElectorState = initialElectorState();
  private readonly timing: ElectionTiming;
  private readonly clock: Clock;

  constructor(
    private readonly client: Client,
    private readonly config: LeaderElectionConfig,
    private readonly log: Logger,
    clock: Clock = systemClock,
  ) {
    this.timing = {
      leaseDurationMs: config.leaseDurationMs ?? 15_000,
      renewDeadlineMs: config.renewDeadlineMs ?? 10_000,
      retryPeriodMs: config.retryPeriodMs ?? 2_000,
    };
    this.clock = clock;
    if (this.timing.renewDeadlineMs >= this.timing.leaseDurationMs) throw new Error('leader election: renewDeadline must be shorter than leaseDuration');
  }

  get isLeader(): boolean {
    return this.state.phase === 'leading';
  }

  private key() {
    return { namespace: this.config.namespace, name: this.config.name };
  }

  /** One attempt to take or keep the lease, bounded by `signal`. */
  private async attempt(signal: AbortSignal): Promise<ElectorEvent> {
    const client = this.client.withSignal(signal);
    const leaseSeconds = Math.ceil(this.timing.leaseDurationMs / 1000);
    const wall = microTime(new Date(this.clock.now()));
    const lease = await client.find(Lease, this.key());
    if (!lease && this.config.stepDownIfDeleted && this.isLeader) {
      this.deletedWhileLeading = true;
      return { type: 'attempted', outcome: 'gone' };
    }
    if (!lease) {
      try {
        await client.create(Lease, {
          metadata: { ...this.key(), labels: this.config.labels, ownerReferences: this.config.ownerReferences },
          spec: { holderIdentity: this.config.identity, leaseDurationSeconds: leaseSeconds, acquireTime: wall, renewTime: wall, leaseTransitions: 0 },
        } as LeaseObject);
        this.state = { ...this.state, observed: undefined };
        return { type: 'attempted', outcome: 'won' };
      } catch (err) {
        if (isAlreadyExists(err)) return { type: 'attempted', outcome: 'held' };
        throw err;
      }
    }
    const spec = lease.spec ?? {};
    const { observed, verdict } = judgeLease(spec, this.config.identity, this.state.observed, {
      monotonic: this.clock.monotonic(),
      wall: this.clock.now(),
      timing: this.timing,
    });
    this.state = { ...this.state, observed };
    if (verdict.verdict === 'held') return { type: 'attempted', outcome: 'held', expiresAt: verdict.expiresAt };
    const mine = verdict.verdict === 'mine';
    const next = {
      ...lease,
      spec: {
        holderIdentity: this.config.identity,
        leaseDurationSeconds: leaseSeconds,
        acquireTime: mine ? spec.acquireTime : wall,
        renewTime: wall,
        leaseTransitions: mine ? (spec.leaseTransitions ?? 0) : (spec.leaseTransitions ?? 0) + 1,
      },
    } as LeaseObject;
    try {
      await client.update(Lease, next);
      return { type: 'attempted', outcome: 'won' };
    } catch (err) {
      if (isConflict(err) || isNotFound(err)) return { type: 'attempted', outcome: 'held' };
      throw err;
    }
  }

  private apply(e: ElectorEvent, callbacks?: LeadershipCallbacks): ElectorTransition {
    const t = electorStep(this.state, e, { monotonic: this.clock.monotonic(), jitter: Math.random(), timing: this.timing });
    this.state = t.state;
    for (const f of t.effects) {
      if (f.effect === 'startedLeading') {
        this.log.info({ identity: this.config.identity }, 'acquired leader lease');
        callbacks?.onStartedLeading();
      } else {
        if (f.reason === 'lost' && this.deletedWhileLeading) {
          this.log.error({ identity: this.config.identity, lease: this.config.name }, "this replica's Lease was deleted while it held it: stopped at once");
        } else if (f.reason === 'lost') {
          this.log.error(
            { identity: this.config.identity, renewDeadlineMs: this.timing.renewDeadlineMs },
            `lost the leader lease: not renewed within ${this.timing.renewDeadlineMs / 1000}s. Controllers stopped; standing for election again`,
          );
        }
        callbacks?.onStoppedLeading(f.reason);
      }
    }
    return t;
  }

  /**
   * Stands for election until `signal` aborts: waits to lead, leads until a renewal cannot succeed
   * within renewDeadline, then stands again. Losing the lease is not the end of the process: an API
   * server that blinked is no reason to restart a pod, and the lease record still names this
   * replica, so it leads again as soon as the API server answers (unless another took over).
   */
  async run(signal: AbortSignal, callbacks: LeadershipCallbacks): Promise<void> {
    this.log.info({ lease: `${this.config.namespace}/${this.config.name}`, identity: this.config.identity }, 'attempting to acquire leader lease');
    let next: ElectorTransition['next'] = { inMs: 0 };
    while (!signal.aborted && next) {
      if (next.inMs > 0) await this.clock.sleep(next.inMs, signal);
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- aborted while awaiting: TS keeps the narrowing from before the await (TypeScript#9998)
      if (signal.aborted) break;
      const bound = deadlineSignal(signal, next.deadlineAt === undefined ? undefined : next.deadlineAt - this.clock.monotonic(), this.clock);
      const event = await this.attempt(bound.signal).catch((err: Error): ElectorEvent => {
        if (!signal.aborted) this.log.warn({ err: err.message }, this.isLeader ? 'error renewing leader lease' : 'error acquiring leader lease');
        return { type: 'attempted', outcome: 'failed' };
      });
      bound.done();
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- aborted while awaiting: TS keeps the narrowing from before the await (TypeScript#9998)
      if (signal.aborted) break;
      next = this.apply(event, callbacks).next;
    }
    this.apply({ type: 'stop' }, callbacks);
  }

  /** Its Lease was deleted while it led (stepDownIfDeleted): it stopped leading for that reason. */
  deletedWhileLeading = false;

  /** Gives the lease up at once so another replica takes over without waiting for expiry. */
  async release(): Promise<void> {
    if (!this.state.releasable && this.state.phase !== 'leading') return;
    this.state = { ...this.state, phase: 'stopped', releasable: false };
    try {
      const lease = await this.client.find(Lease, this.key());
      if (!lease || lease.spec?.holderIdentity !== this.config.identity) return;
      const now = microTime(new Date(this.clock.now()));
      await this.client.update(Lease, {
        ...lease,
        spec: { ...lease.spec, holderIdentity: undefined, leaseDurationSeconds: 1, acquireTime: now, renewTime: now },
      } as LeaseObject);
      this.log.info('released leader lease');
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'could not release leader lease; it will expire');
    }
  }
}

/** A signal that aborts with `parent` or after `ms` (none: never), whichever comes first; `done` removes its hooks. */
function deadlineSignal(parent: AbortSignal, ms: number | undefined, clock: Clock): { signal: AbortSignal; done(): void } {
  if (ms === undefined) return { signal: parent, done: () => undefined };
  const ac = new AbortController();
  const onParent = () => ac.abort(parent.reason);
  const timer = clock.setTimer(Math.max(0, ms), () => ac.abort(new Error('renew deadline passed')));
  if (parent.aborted) ac.abort(parent.reason);
  else parent.addEventListener('abort', onParent, { once: true });
  return {
    signal: ac.signal,
    done: () => {
      timer.cancel();
      parent.removeEventListener('abort', onParent);
    },
  };
}
