import { ApiError, isGone } from '../client/errors.js';

/**
 * The watcher's states and its one transition function, pure (kube-rs's `watcher.rs` is the model):
 * what to do next is decided here from what happened, and `Watcher` only performs it (LIST, WATCH,
 * wait) and feeds back the outcome. Every decision that used to hide in flags and loops is a row
 * of `watcher-state.test.ts`: 410 Gone, a too-large resourceVersion, a watch that opens and fails at
 * once, a server that closes every watch, sustained health, the API server coming back.
 */
export interface WatcherState {
  /** What the watcher is doing. */
  phase: 'new' | 'listing' | 'streaming' | 'watching' | 'waiting' | 'stopped';
  /** Where a watch resumes from; '' means the next step is a full list (at the start, after 410 or a too-large version). */
  resourceVersion: string;
  /**
   * The API server refused a streaming list (its WatchList feature off, or a server from before it):
   * full lists are paginated LISTs from then on.
   */
  streamRefused: boolean;
  /** A LIST has completed once: the cache is filled. */
  synced: boolean;
  /** A watch stream is open. */
  connected: boolean;
  /** Failed attempts in a row; back to 0 only on evidence of health (a LIST, a delivered event, a watch open for a while). */
  failures: number;
  lastError?: Error;
  /** Reconnect backoff: the next delay's exponent, and when the last failure was (monotonic ms). */
  backoffAttempt: number;
  lastFailureAt?: number;
  /** Relists forced by the server (410, too large): their backoff exponent and when the last one began. */
  relistAttempt: number;
  lastRelistAt?: number;
  /**
   * The selection changed (a shard selector) while a list or stream of the old one was under way:
   * what it brings is of the old selection, its end is not a place to resume from, and a full list
   * of the new selection follows.
   */
  reselected: boolean;
  /** The open watch: when it opened (monotonic ms), whether it delivered anything, whether the server sends bookmarks. */
  openedAt?: number;
  delivered: boolean;
  bookmarks: boolean;
}

export type WatcherEvent =
  | { type: 'start' }
  | { type: 'listed'; resourceVersion: string }
  /** A streaming list's initial events are all in (its bookmark marked `k8s.io/initial-events-end`): the stream goes on as a watch. */
  | { type: 'initialEventsEnded'; resourceVersion: string }
  | { type: 'listFailed'; error: Error }
  | { type: 'opened' }
  /** A line of the stream: an object event or a bookmark, with the resourceVersion it carries. */
  | { type: 'delivered'; event: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK'; resourceVersion?: string }
  /** The watch stayed open for `healthyAfterMs`: it works, even if nothing changed. */
  | { type: 'sustained' }
  /** The stream ended: cleanly (the server's timeout), or with an error (an ERROR line, a reset, silence). */
  | { type: 'ended'; error?: Error }
  | { type: 'waited' }
  /** The API server answers again after an outage: no reason to wait out the backoff. */
  | { type: 'retryNow' }
  /** What is watched changed (the shard selector): the store must be listed again under the new selection. */
  | { type: 'reselected' }
  | { type: 'stop' };

/** What the shell does next. `continue`: carry on with what it is doing (a stream stays open). */
export type WatcherAction =
  | { do: 'list' }
  /** A full list as a watch (`sendInitialEvents`): every object as an ADDED event, then a bookmark, then the watch goes on. */
  | { do: 'streamList' }
  | { do: 'watch'; resourceVersion: string }
  | { do: 'wait'; ms: number }
  | { do: 'continue' }
  /** End the open stream now (its selection is stale); its `ended` follows. */
  | { do: 'interrupt' }
  | { do: 'stop' };

/** Something worth a log line, decided with the transition. */
export type WatcherNote =
  | { note: 'relist'; reason: 'gone' | 'too-large'; inMs: number }
  | { note: 'failed'; error: Error; retryInMs: number; failures: number }
  | { note: 'recovered'; afterFailures: number }
  | { note: 'streamRefused'; error: Error };

export interface WatcherConfig {
  /** Reconnect backoff, as client-go's reflector and kube-rs: 800 ms doubling to 30 s, jittered. */
  backoff: { initial: number; max: number };
  /**
   * A failure this long after the previous one starts the backoff from the beginning; sooner, it
   * keeps climbing. client-go's and kube-rs's 2 minutes: a watch that opens and fails at once keeps
   * backing off instead of reconnecting every second for ever.
   */
  backoffResetMs: number;
  /** Forced relists closer together than this are a loop, not an incident: back off between them. */
  relistLoopMs: number;
  /** A watch open this long without an error is healthy (readiness), even in a quiet cluster. */
  healthyAfterMs: number;
  /** A watch that ends sooner than this having delivered nothing counts as a failure (a server that accepts and closes). */
  minWatchMs: number;
  /**
   * Full lists as streaming lists (KEP-3157, `sendInitialEvents`; client-go's default since 1.35):
   * the API server serves them from its watch cache, one object at a time, instead of building
   * LIST pages. Refused by the server, the watcher falls back to paginated LISTs for good.
   */
  streamingLists: boolean;
}

export const DEFAULT_WATCHER_CONFIG: WatcherConfig = {
  backoff: { initial: 800, max: 30_000 },
  backoffResetMs: 120_000,
  relistLoopMs: 60_000,
  healthyAfterMs: 5_000,
  minWatchMs: 1_000,
  streamingLists: true,
};

export interface StepEnv {
  /** Monotonic milliseconds. */
  now: number;
  /** In [0, 1): the backoff's jitter. */
  random: () => number;
  config: WatcherConfig;
}

export interface Transition {
  state: WatcherState;
  action: WatcherAction;
  note?: WatcherNote;
}

export const initialWatcherState = (): WatcherState => ({
  phase: 'new',
  resourceVersion: '',
  streamRefused: false,
  synced: false,
  connected: false,
  failures: 0,
  backoffAttempt: 0,
  relistAttempt: 0,
  reselected: false,
  delivered: false,
  bookmarks: false,
});

/** Why a watch or list failed, as far as what to do next is concerned. */
export function classifyWatchError(err: Error): 'gone' | 'too-large' | 'retry' {
  if (isGone(err)) return 'gone';
  if (isTooLargeResourceVersion(err)) return 'too-large';
  return 'retry';
}

/**
 * The server is behind the resourceVersion asked for (an etcd restored from a backup, a lagging
 * API server behind a load balancer): 504 with the cause `ResourceVersionTooLarge` (older servers
 * say so only in the message). Retrying the same version waits for a revision that may never come;
 * client-go relists.
 */
export function isTooLargeResourceVersion(err: unknown): boolean {
  if (!(err instanceof ApiError)) return false;
  if (err.details?.causes?.some((c) => c.reason === 'ResourceVersionTooLarge')) return true;
  return (err.status === 504 || err.reason === 'Timeout') && /too large resource version/i.test(err.serverMessage);
}

/** The next step after this state: a full list when there is nothing to resume from (streamed where it can be), else WATCH. */
function resume(s: WatcherState, env: StepEnv): Transition {
  if (s.resourceVersion) return { state: { ...s, phase: 'watching' }, action: { do: 'watch', resourceVersion: s.resourceVersion } };
  if (env.config.streamingLists && !s.streamRefused) return { state: { ...s, phase: 'streaming' }, action: { do: 'streamList' } };
  return { state: { ...s, phase: 'listing' }, action: { do: 'list' } };
}

/**
 * A server that does not stream lists says so when the watch is opened: 422 (the WatchList
 * feature gate off: "sendInitialEvents is forbidden…", or a server older than the parameter:
 * "resourceVersionMatch is forbidden for watch") or 400.
 */
export function refusesStreaming(err: Error): boolean {
  return err instanceof ApiError && (err.status === 422 || err.status === 400);
}

function backoffDelay(attempt: number, env: StepEnv): number {
  const { initial, max } = env.config.backoff;
  return Math.min(max, Math.min(max, initial * 2 ** attempt) * (0.5 + env.random()));
}

/** A failed attempt: counted, and the next one after a backoff that resets only after a quiet spell. */
function fail(s: WatcherState, error: Error, env: StepEnv): Transition {
  const attempt = s.lastFailureAt !== undefined && env.now - s.lastFailureAt > env.config.backoffResetMs ? 0 : s.backoffAttempt;
  const ms = backoffDelay(attempt, env);
  const failures = s.failures + 1;
  return {
    state: { ...s, phase: 'waiting', connected: false, openedAt: undefined, failures, lastError: error, backoffAttempt: attempt + 1, lastFailureAt: env.now },
    action: { do: 'wait', ms },
    note: { note: 'failed', error, retryInMs: ms, failures },
  };
}

/** The server cannot resume from our version: LIST again, at once unless relists come back to back. */
function relist(s: WatcherState, reason: 'gone' | 'too-large', env: StepEnv): Transition {
  const looping = s.lastRelistAt !== undefined && env.now - s.lastRelistAt < env.config.relistLoopMs;
  const attempt = looping ? s.relistAttempt : 0;
  const ms = looping ? backoffDelay(attempt, env) : 0;
  const state: WatcherState = {
    ...s,
    resourceVersion: '',
    connected: false,
    openedAt: undefined,
    relistAttempt: looping ? attempt + 1 : 0,
    lastRelistAt: env.now + ms,
  };
  const next = ms ? { state: { ...state, phase: 'waiting' as const }, action: { do: 'wait', ms } as const } : resume(state, env);
  return { ...next, note: { note: 'relist', reason, inMs: ms } };
}

/** Evidence the watch works: failures are forgotten (the backoff is not: it resets only after a quiet spell). */
function healthy(s: WatcherState): Transition {
  if (!s.failures) return { state: s, action: { do: 'continue' } };
  return { state: { ...s, failures: 0, lastError: undefined }, action: { do: 'continue' }, note: { note: 'recovered', afterFailures: s.failures } };
}

export function step(s: WatcherState, e: WatcherEvent, env: StepEnv): Transition {
  if (s.phase === 'stopped') return { state: s, action: { do: 'stop' } };
  switch (e.type) {
    case 'start':
      return s.phase === 'new' ? resume(s, env) : { state: s, action: { do: 'continue' } };
    case 'stop':
      return { state: { ...s, phase: 'stopped', connected: false, openedAt: undefined }, action: { do: 'stop' } };
    case 'listed': {
      const next: WatcherState = {
        ...s,
        resourceVersion: s.reselected ? '' : e.resourceVersion,
        reselected: false,
        synced: true,
        failures: 0,
        lastError: undefined,
      };
      return { ...resume(next, env), note: s.failures ? { note: 'recovered', afterFailures: s.failures } : undefined };
    }
    case 'initialEventsEnded': {
      // An interrupted stream of the old selection: its `ended` comes next.
      if (s.phase !== 'streaming' || s.reselected) return { state: s, action: { do: 'continue' } };
      const next: WatcherState = {
        ...s,
        phase: 'watching',
        resourceVersion: e.resourceVersion,
        synced: true,
        failures: 0,
        lastError: undefined,
        delivered: true,
      };
      return { state: next, action: { do: 'continue' }, note: s.failures ? { note: 'recovered', afterFailures: s.failures } : undefined };
    }
    case 'listFailed':
      // A LIST asks for the latest state: no version of ours can be too old or too new for it.
      return fail({ ...s, resourceVersion: '' }, e.error, env);
    case 'opened':
      // A streaming list stays `streaming` until its initial events have all come.
      return {
        state: { ...s, phase: s.phase === 'streaming' ? 'streaming' : 'watching', connected: true, openedAt: env.now, delivered: false, bookmarks: false },
        action: { do: 'continue' },
      };
    case 'delivered': {
      const next: WatcherState = {
        ...s,
        // Until a streaming list's end, its events are not in the store: nothing to resume from;
        // nor after a reselection, until the new selection's list.
        resourceVersion: s.phase === 'streaming' || s.reselected ? '' : e.resourceVersion || s.resourceVersion,
        delivered: true,
        bookmarks: s.bookmarks || e.event === 'BOOKMARK',
      };
      return healthy(next);
    }
    case 'sustained':
      return s.connected ? healthy(s) : { state: s, action: { do: 'continue' } };
    case 'ended': {
      const closed: WatcherState = { ...s, connected: false };
      // Interrupted for a new selection: not a failure; list it at once.
      if (s.reselected) return resume({ ...closed, reselected: false, resourceVersion: '', openedAt: undefined }, env);
      if (e.error) {
        if (s.phase === 'streaming' && !s.connected && refusesStreaming(e.error))
          return { ...resume({ ...closed, streamRefused: true }, env), note: { note: 'streamRefused', error: e.error } };
        const why = classifyWatchError(e.error);
        if (why !== 'retry') return relist(closed, why, env);
        return fail(closed, e.error, env);
      }
      if (s.phase === 'streaming') return fail(closed, new Error('the streaming list ended before all its initial events came'), env);
      // A clean end (the server's timeoutSeconds) resumes at once; one that came at once with
      // nothing delivered is a server that accepts and closes: a failure, so it backs off.
      const brief = s.openedAt !== undefined && env.now - s.openedAt < env.config.minWatchMs && !s.delivered;
      if (brief) return fail(closed, new Error('the watch was closed as soon as it opened'), env);
      return resume({ ...closed, openedAt: undefined }, env);
    }
    case 'waited':
      if (s.phase !== 'waiting') return { state: s, action: { do: 'continue' } };
      return resume(s, env);
    case 'reselected':
      if (s.phase === 'new') return { state: s, action: { do: 'continue' } };
      // A LIST in flight: it lands, then `listed` lists again. An open (or opening) stream: end it.
      if (s.phase === 'listing') return { state: { ...s, reselected: true }, action: { do: 'continue' } };
      if (s.phase === 'streaming' || s.phase === 'watching') return { state: { ...s, reselected: true, resourceVersion: '' }, action: { do: 'interrupt' } };
      return { state: { ...s, resourceVersion: '' }, action: { do: 'continue' } };
    case 'retryNow': {
      const reset: WatcherState = { ...s, backoffAttempt: 0, lastFailureAt: undefined };
      if (s.phase !== 'waiting') return { state: reset, action: { do: 'continue' } };
      return resume(reset, env);
    }
  }
}

/** How long an open watch may stay silent before it is presumed dead: 90 s once bookmarks are known to come, else the server's own timeout plus 30 s. */
export function silenceLimitMs(s: WatcherState, timeoutSeconds: number): number {
  return s.bookmarks ? BOOKMARK_SILENCE_MS : (timeoutSeconds + 30) * 1000;
}

/**
 * The API server's watch cache sends every watcher that asked for bookmarks one about every minute
 * (cacher's defaultBookmarkFrequency). Once a watch has shown it gets them, a silence this long
 * means the connection is dead, not that nothing changed.
 */
export const BOOKMARK_SILENCE_MS = 90_000;
