import { getHeapStatistics } from 'node:v8';
import type { Logger } from 'pino';
import type { Clock, Timer } from '../clock/clock.js';
import { withInspectorSession } from '../helpers/inspector-session.js';
import type { Runnable } from './runnables.js';

/**
 * Memory given back after a burst of work.
 *
 * V8 grows its heap to take a burst (10,000 certificates issued at once, a relist of a large
 * cache) and keeps the pages once it is over: its regular collections free the objects but leave
 * the pages committed, so the process stays at the burst's size for good. Measured after 10,000
 * certificates (bench/compare/certificates): 526 MiB RSS with 140 MiB live; a minute idle and two
 * forced regular collections changed nothing. Go's runtime returns such memory by itself (its
 * scavenger). V8 does it only in the collection it runs when memory is low, which compacts every
 * page and releases the emptied ones (and frees the malloc'd buffers the garbage held): there,
 * 526 → 371 MiB in one 0.6 s pause.
 *
 * So the manager runs that collection when it pays, decided by `compactionStep` (pure, table
 * tested): the V8 heap's resident size has grown well past the least it held since the last one,
 * and no controller has had work (a key queued or reconciling) and no webhook has been called for
 * `idleMs` (`workSince`). The pause is about
 * 4 ms per MiB live; it falls when nothing is waiting, and at most once per growth.
 */
export interface CompactionPolicy {
  /** How long every controller must have had nothing queued or in flight. */
  idleMs: number;
  /** Growth over the floor that is worth a pause: at least this many bytes and this share of the floor. */
  minGrowthBytes: number;
  minGrowthRatio: number;
}

export const DEFAULT_COMPACTION_POLICY: CompactionPolicy = { idleMs: 10_000, minGrowthBytes: 32 * 2 ** 20, minGrowthRatio: 0.25 };

/** How often the heap and the queues are looked at. */
export const COMPACTION_SAMPLE_MS = 2_000;

export interface CompactionState {
  /** The least the heap has held resident since the last compaction (or the start): growth counts from here. */
  floor: number;
  /** Monotonic ms since when no controller has had work; undefined while one has. */
  idleSince: number | undefined;
}

export interface HeapSample {
  /** Monotonic ms. */
  at: number;
  /** The V8 heap's resident bytes. */
  resident: number;
  /** Some controller has a key queued or reconciling. */
  busy: boolean;
}

export const initialCompactionState = (resident: number): CompactionState => ({ floor: resident, idleSince: undefined });

/** One sample's step: the state it leaves, and whether to compact now. */
export function compactionStep(state: CompactionState, sample: HeapSample, policy: CompactionPolicy): { state: CompactionState; compact: boolean } {
  const floor = Math.min(state.floor, sample.resident);
  if (sample.busy) return { state: { floor, idleSince: undefined }, compact: false };
  const idleSince = state.idleSince ?? sample.at;
  const grown = sample.resident - floor >= Math.max(policy.minGrowthBytes, floor * policy.minGrowthRatio);
  return { state: { floor, idleSince }, compact: grown && sample.at - idleSince >= policy.idleMs };
}

/**
 * The compaction's `busy`: some controller has a key queued or in flight now, or the webhooks were
 * called since the last look. A webhook call holds the API server's request, and the user's behind
 * it, so the pause must not fall while they come in; one between two samples is not in flight at
 * either, so the count of calls is compared, not the calls open at the moment.
 */
export function workSince(pending: () => boolean, calls: () => number): () => boolean {
  let seen = calls();
  return () => {
    const now = calls();
    const called = now !== seen;
    seen = now;
    return called || pending();
  };
}

/** V8's low-memory collection (what `HeapProfiler.collectGarbage` runs), without `--expose-gc`. */
export const collectAllAvailableGarbage = (): Promise<void> => withInspectorSession((session) => session.post('HeapProfiler.collectGarbage'));

const mib = (bytes: number) => Math.round(bytes / 2 ** 20);

/** The runnable: samples every COMPACTION_SAMPLE_MS on every replica, compacts when the step says so. */
export class IdleCompaction implements Runnable {
  readonly name = 'idle-compaction';
  readonly needLeaderElection = false;
  private timer?: Timer;
  private stopped = false;
  private state: CompactionState;

  constructor(
    private readonly busy: () => boolean,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly policy: CompactionPolicy = DEFAULT_COMPACTION_POLICY,
    private readonly resident: () => number = () => getHeapStatistics().total_physical_size,
    private readonly compact: () => Promise<void> = collectAllAvailableGarbage,
  ) {
    this.state = initialCompactionState(this.resident());
  }

  start(signal: AbortSignal): void {
    // The next sample is armed only after this one (and any compaction) is done, and not once stopped.
    const next = () => {
      if (!signal.aborted && !this.stopped) this.timer = this.clock.setTimer(COMPACTION_SAMPLE_MS, () => void tick());
    };
    const tick = async () => {
      const step = compactionStep(this.state, { at: this.clock.monotonic(), resident: this.resident(), busy: this.busy() }, this.policy);
      this.state = step.state;
      if (step.compact) await this.run(step.state.floor);
      next();
    };
    next();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  private async run(floor: number): Promise<void> {
    const before = this.resident();
    const t0 = this.clock.monotonic();
    try {
      await this.compact();
    } catch (err) {
      // Without an inspector (a Node built without it) there is nothing to give back with: stay as V8 leaves it.
      this.log.warn({ err }, 'could not compact the heap; memory freed after bursts stays with the process');
      this.stop();
      return;
    }
    const after = this.resident();
    this.state = initialCompactionState(after);
    this.log.info(
      { heapResidentMiB: { floor: mib(floor), before: mib(before), after: mib(after) }, pauseMs: Math.round(this.clock.monotonic() - t0) },
      'gave back memory the last burst of work left behind',
    );
  }
}
