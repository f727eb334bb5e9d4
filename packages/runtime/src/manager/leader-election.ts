import type { Logger } from 'pino';
import type { Client } from '../client/client.js';
import { isAlreadyExists, isConflict, isNotFound } from '../client/errors.js';
import { Lease } from '../client/kind.js';
import { sleep } from '../clock/clock.js';
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

/** A signal that aborts with `parent` or after `ms`, whichever comes first; `done` removes its hooks. */
function deadlineSignal(parent: AbortSignal, ms: number): { signal: AbortSignal; done(): void } {
  const ac = new AbortController();
  const onParent = () => ac.abort(parent.reason);
  const timer = setTimeout(() => ac.abort(new Error(`renew deadline passed`)), Math.max(0, ms));
  if (parent.aborted) ac.abort(parent.reason);
  else parent.addEventListener('abort', onParent, { once: true });
  return {
    signal: ac.signal,
    done: () => {
      clearTimeout(timer);
      parent.removeEventListener('abort', onParent);
    },
  };
}

/**
 * Lease-based leader election, the protocol of client-go and controller-runtime: candidates try to
 * take the Lease every retry period; the holder renews it; a lease is expired when its record has
 * not changed for leaseDuration, measured on this replica's clock (the holder's timestamps are
 * trusted only within one retry period).
 */
export class LeaderElector {
  private leading = false;
  private releasable = false;
  private observed?: { record: string; at: number };
  private readonly leaseDuration: number;
  private readonly renewDeadline: number;
  private readonly retryPeriod: number;

  constructor(private readonly client: Client, private readonly config: LeaderElectionConfig, private readonly log: Logger) {
    this.leaseDuration = config.leaseDurationMs ?? 15_000;
    this.renewDeadline = config.renewDeadlineMs ?? 10_000;
    this.retryPeriod = config.retryPeriodMs ?? 2_000;
    if (this.renewDeadline >= this.leaseDuration) throw new Error('leader election: renewDeadline must be shorter than leaseDuration');
  }

  get isLeader(): boolean {
    return this.leading;
  }

  private key() {
    return { namespace: this.config.namespace, name: this.config.name };
  }

  /**
   * One attempt to take or keep the lease. When another replica holds it, `expiresAt` says when
   * it expires by our reckoning, so the next attempt can be made right then.
   */
  private async tryAcquireOrRenew(client: Client): Promise<{ ok: boolean; expiresAt?: number }> {
    const now = new Date();
    const leaseSeconds = Math.ceil(this.leaseDuration / 1000);
    const lease = await client.find(Lease, this.key());
    if (!lease) {
      try {
        await client.create(Lease, {
          metadata: { ...this.key() },
          spec: { holderIdentity: this.config.identity, leaseDurationSeconds: leaseSeconds, acquireTime: microTime(now), renewTime: microTime(now), leaseTransitions: 0 },
        } as LeaseObject);
        this.observed = undefined;
        return { ok: true };
      } catch (err) {
        if (isAlreadyExists(err)) return { ok: false };
        throw err;
      }
    }
    const spec = lease.spec ?? {};
    const record = `${spec.holderIdentity}|${spec.renewTime}|${spec.leaseDurationSeconds}`;
    if (this.observed?.record !== record) {
      // When did the holder renew? Our own clock says "by now"; the holder's renewTime says
      // earlier. Trust the holder's clock only within one retry period of our observation: that
      // bounds what clock skew can do to well under the leaseDuration - renewDeadline margin,
      // while letting a candidate take over a dead leader's lease close to its real expiry.
      const now = Date.now();
      const renewed = Date.parse(spec.renewTime ?? '');
      const at = Number.isFinite(renewed) ? Math.min(now, Math.max(renewed, now - this.retryPeriod)) : now;
      this.observed = { record, at };
    }
    const holder = spec.holderIdentity ?? '';
    const mine = holder === this.config.identity;
    const durationMs = (spec.leaseDurationSeconds ?? leaseSeconds) * 1000;
    if (!mine && holder && this.observed.at + durationMs > Date.now()) return { ok: false, expiresAt: this.observed.at + durationMs };
    const next = {
      ...lease,
      spec: {
        holderIdentity: this.config.identity,
        leaseDurationSeconds: leaseSeconds,
        acquireTime: mine ? spec.acquireTime : microTime(now),
        renewTime: microTime(now),
        leaseTransitions: mine ? spec.leaseTransitions ?? 0 : (spec.leaseTransitions ?? 0) + 1,
      },
    } as LeaseObject;
    try {
      await client.update(Lease, next);
      return { ok: true };
    } catch (err) {
      if (isConflict(err) || isNotFound(err)) return { ok: false };
      throw err;
    }
  }

  /**
   * Stands for election until `signal` aborts: waits to lead, leads until a renewal cannot succeed
   * within renewDeadline, then stands again. Losing the lease is not the end of the process: an API
   * server that blinked is no reason to restart a pod, and the lease record still names this
   * replica, so it leads again as soon as the API server answers (unless another took over).
   */
  async run(signal: AbortSignal, callbacks: LeadershipCallbacks): Promise<void> {
    this.log.info({ lease: `${this.config.namespace}/${this.config.name}`, identity: this.config.identity }, 'attempting to acquire leader lease');
    while (!signal.aborted) {
      if (!(await this.acquire(signal))) break;
      this.leading = true;
      this.log.info({ identity: this.config.identity }, 'acquired leader lease');
      callbacks.onStartedLeading();
      const outcome = await this.renew(signal);
      this.leading = false;
      // Stopped while leading: the lease is still ours to hand over (release). Lost: it is not.
      this.releasable = outcome === 'stopped';
      if (outcome === 'lost') {
        this.log.error(
          { identity: this.config.identity, renewDeadlineMs: this.renewDeadline },
          `lost the leader lease: not renewed within ${this.renewDeadline / 1000}s. Controllers stopped; standing for election again`,
        );
      }
      callbacks.onStoppedLeading(outcome);
    }
  }

  /** Tries every retry period (jittered), waking exactly when the holder's lease expires. False when stopped. */
  private async acquire(signal: AbortSignal): Promise<boolean> {
    const client = this.client.withSignal(signal);
    while (!signal.aborted) {
      const attempt = await this.tryAcquireOrRenew(client).catch((err) => {
        if (!signal.aborted) this.log.warn({ err: (err as Error).message }, 'error acquiring leader lease');
        return { ok: false, expiresAt: undefined };
      });
      if (attempt.ok) return true;
      const untilExpiry = attempt.expiresAt !== undefined ? attempt.expiresAt - Date.now() + 10 : Infinity;
      await sleep(Math.max(10, Math.min(this.retryPeriod * (1 + Math.random() * 0.2), untilExpiry)), signal);
    }
    return false;
  }

  /**
   * Renews every retry period. Each attempt is cut off at the renew deadline (last success +
   * renewDeadline): a request hanging on a stopped API server must not keep this replica leading
   * past the point where another may take over.
   */
  private async renew(signal: AbortSignal): Promise<'lost' | 'stopped'> {
    let lastRenew = Date.now();
    while (!signal.aborted) {
      await sleep(this.retryPeriod, signal);
      if (signal.aborted) break;
      const bound = deadlineSignal(signal, lastRenew + this.renewDeadline - Date.now());
      const ok = await this.tryAcquireOrRenew(this.client.withSignal(bound.signal)).then(
        (a) => a.ok,
        (err) => {
          if (!signal.aborted) this.log.warn({ err: (err as Error).message }, 'error renewing leader lease');
          return false;
        },
      );
      bound.done();
      if (ok) lastRenew = Date.now();
      else if (Date.now() - lastRenew >= this.renewDeadline) return 'lost';
    }
    return 'stopped';
  }

  /** Gives the lease up at once so another replica takes over without waiting for expiry. */
  async release(): Promise<void> {
    if (!this.leading && !this.releasable) return;
    this.leading = false;
    this.releasable = false;
    try {
      const lease = await this.client.find(Lease, this.key());
      if (!lease || lease.spec?.holderIdentity !== this.config.identity) return;
      const now = microTime();
      await this.client.update(Lease, { ...lease, spec: { ...lease.spec, holderIdentity: undefined, leaseDurationSeconds: 1, acquireTime: now, renewTime: now } } as LeaseObject);
      this.log.info('released leader lease');
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'could not release leader lease; it will expire');
    }
  }
}
