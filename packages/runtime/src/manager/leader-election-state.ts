/**
 * Leader election as a pure state machine over monotonic time, client-go's protocol: candidates try
 * to take the Lease every retry period; the holder renews it; a lease is expired when its record has
 * not changed for leaseDuration, measured on this replica's clock. Two pure functions, both
 * table-tested (`leader-election-state.test.ts`): `judgeLease` reads a Lease, `step` decides what the
 * elector does next; `LeaderElector` only performs it.
 *
 * Only two things here are wall-clock time: the `renewTime` written to the Lease, and the reading of
 * another holder's `renewTime`, trusted only within one retry period. Every deadline and expiry is
 * monotonic, so a wall-clock step on any replica changes no one's leadership.
 */

export interface ElectionTiming {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

/** The last Lease record seen and when, on the monotonic clock, its holder renewed it by our reckoning. */
export interface Observation {
  record: string;
  at: number;
}

export interface ElectorState {
  phase: 'candidate' | 'leading' | 'stopped';
  /** When the last renewal (or the acquisition) succeeded, monotonic ms. */
  renewedAt?: number;
  observed?: Observation;
  /** Stopped while leading: the lease is still ours to hand over. */
  releasable: boolean;
}

export const initialElectorState = (): ElectorState => ({ phase: 'candidate', releasable: false });

export interface LeaseSpecView {
  holderIdentity?: string;
  renewTime?: string;
  leaseDurationSeconds?: number;
}

export type LeaseVerdict =
  /** Ours: renew it. */
  | { verdict: 'mine' }
  /** Nobody holds it, or the holder let it expire: take it. */
  | { verdict: 'free' }
  /** Another holds it until `expiresAt` (monotonic ms). */
  | { verdict: 'held'; expiresAt: number };

/**
 * Who may write the Lease now. When its record changed since we last looked, the holder renewed at
 * some point: by our clock "just now"; by the holder's renewTime, earlier. The holder's clock is
 * trusted only within one retry period of our observation, so clock skew (or a step) between
 * replicas moves an expiry by at most that, well inside the leaseDuration - renewDeadline margin,
 * while a candidate still takes over a dead leader's lease close to its real expiry.
 */
export function judgeLease(
  spec: LeaseSpecView | undefined,
  identity: string,
  previous: Observation | undefined,
  env: { monotonic: number; wall: number; timing: ElectionTiming },
): { observed: Observation; verdict: LeaseVerdict } {
  const s = spec ?? {};
  const record = `${s.holderIdentity}|${s.renewTime}|${s.leaseDurationSeconds}`;
  let observed = previous;
  if (observed?.record !== record) {
    const renewed = Date.parse(s.renewTime ?? '');
    const ago = Number.isFinite(renewed) ? Math.min(env.timing.retryPeriodMs, Math.max(0, env.wall - renewed)) : 0;
    observed = { record, at: env.monotonic - ago };
  }
  const holder = s.holderIdentity ?? '';
  if (holder === identity) return { observed, verdict: { verdict: 'mine' } };
  const durationMs = (s.leaseDurationSeconds ?? Math.ceil(env.timing.leaseDurationMs / 1000)) * 1000;
  const expiresAt = observed.at + durationMs;
  if (!holder || expiresAt <= env.monotonic) return { observed, verdict: { verdict: 'free' } };
  return { observed, verdict: { verdict: 'held', expiresAt } };
}

export type ElectorEvent =
  /** An attempt to take or keep the lease: it succeeded, or another holds it (until `expiresAt`), or it failed. */
  | { type: 'attempted'; outcome: 'won' }
  | { type: 'attempted'; outcome: 'held'; expiresAt?: number }
  | { type: 'attempted'; outcome: 'failed' }
  /** The leader's own Lease was deleted (stepDownIfDeleted): someone removed it; it stops at once. */
  | { type: 'attempted'; outcome: 'gone' }
  | { type: 'stop' };

export type ElectorEffect = { effect: 'startedLeading' } | { effect: 'stoppedLeading'; reason: 'lost' | 'stopped' };

export interface ElectorTransition {
  state: ElectorState;
  effects: ElectorEffect[];
  /**
   * When to make the next attempt (ms from now), and the monotonic time it must have answered by (a
   * renewal may not run past the renew deadline). Absent once stopped.
   */
  next?: { inMs: number; deadlineAt?: number };
}

/** How long a candidate waits: a jittered retry period, or less when the holder's lease expires sooner. */
function candidateWait(env: { monotonic: number; jitter: number; timing: ElectionTiming }, expiresAt?: number): number {
  const retry = env.timing.retryPeriodMs * (1 + env.jitter * 0.2);
  const untilExpiry = expiresAt !== undefined ? expiresAt - env.monotonic + 10 : Infinity;
  return Math.max(10, Math.min(retry, untilExpiry));
}

/**
 * The next renewal: a retry period on, never past the renew deadline; its deadline is the renew
 * deadline (last success + renewDeadline), so a request hanging on a stopped API server cannot keep
 * this replica leading past the point where another may take over.
 */
function renewal(renewedAt: number, env: { monotonic: number; timing: ElectionTiming }) {
  const deadlineAt = renewedAt + env.timing.renewDeadlineMs;
  return { inMs: Math.max(0, Math.min(env.timing.retryPeriodMs, deadlineAt - env.monotonic)), deadlineAt };
}

/** `jitter` in [0, 1). */
export function electorStep(s: ElectorState, e: ElectorEvent, env: { monotonic: number; jitter: number; timing: ElectionTiming }): ElectorTransition {
  if (s.phase === 'stopped') return { state: s, effects: [] };
  if (e.type === 'stop') {
    const leading = s.phase === 'leading';
    return { state: { ...s, phase: 'stopped', releasable: leading }, effects: leading ? [{ effect: 'stoppedLeading', reason: 'stopped' }] : [] };
  }
  if (s.phase === 'candidate') {
    if (e.outcome === 'won') {
      return { state: { ...s, phase: 'leading', renewedAt: env.monotonic }, effects: [{ effect: 'startedLeading' }], next: renewal(env.monotonic, env) };
    }
    return { state: s, effects: [], next: { inMs: candidateWait(env, e.outcome === 'held' ? e.expiresAt : undefined) } };
  }
  // Leading.
  if (e.outcome === 'won') return { state: { ...s, renewedAt: env.monotonic }, effects: [], next: renewal(env.monotonic, env) };
  if (e.outcome === 'gone')
    return {
      state: { ...s, phase: 'candidate', renewedAt: undefined },
      effects: [{ effect: 'stoppedLeading', reason: 'lost' }],
      next: { inMs: candidateWait(env) },
    };
  const renewedAt = s.renewedAt ?? env.monotonic;
  if (env.monotonic - renewedAt >= env.timing.renewDeadlineMs) {
    // Lost: stop acting at once and stand again. The record may still name us after an API server
    // blink, and then we lead again as soon as it answers (unless another took over meanwhile).
    return {
      state: { ...s, phase: 'candidate', renewedAt: undefined },
      effects: [{ effect: 'stoppedLeading', reason: 'lost' }],
      next: { inMs: candidateWait(env) },
    };
  }
  return { state: s, effects: [], next: renewal(renewedAt, env) };
}
