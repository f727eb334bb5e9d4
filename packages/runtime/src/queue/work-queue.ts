import { systemClock, type Clock, type Timer } from '../clock/clock.js';
import { DelayHeap } from './delay-heap.js';
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiters.js';
import { ReadyLanes } from './ready-lanes.js';

/**
 * Priorities as controller-runtime's priority queue names them: higher is handed out first. Events
 * nobody caused now (the initial list at a start or a leadership gain, periodic resyncs) are low,
 * so users' edits pass them.
 */
/**
 * Queue priorities: `low` for what nobody changed just now (initial list, resync), `normal` for
 * events, `high` for a watch that reports work in flight finishing (`owns(kind, { priority })`), so a
 * pipeline finishes what it started before it starts more.
 */
export const Priority = { low: -100, normal: 0, high: 100 } as const;

/** What the queue reports, under controller-runtime's `workqueue_*` metric names. */
export interface QueueMetrics {
  depth(n: number): void;
  add(): void;
  retry(): void;
  /** Seconds an item waited between being added and being picked up. */
  queued(seconds: number): void;
  /** Seconds an item was processed for. */
  worked(seconds: number): void;
}

export interface WorkQueueOptions {
  rateLimiter?: RateLimiter;
  metrics?: QueueMetrics;
  /** Delays and waits are measured on its monotonic time. */
  clock?: Clock;
}

/**
 * client-go's work queue semantics, with controller-runtime's priorities:
 * - an item waiting in the queue is held once, however often it is added (dedup), at the highest
 *   priority it was added with; the highest priority is handed out first, FIFO within one;
 * - an item being processed is never handed to a second worker; adds during processing mark it
 *   dirty and it is queued again, once, when the worker calls done() (merged re-run);
 * - delayed adds and rate-limited (backoff) adds;
 * - shutDown() stops handing out work; drain() waits for in-flight items.
 */
export class WorkQueue {
  private readonly ready = new ReadyLanes();
  /** Items added and not yet handed out, with the highest priority they were added with. */
  private readonly dirty = new Map<string, number>();
  private readonly processing = new Map<string, number>();
  /** The priority each item in flight was handed out with (its retries keep it). */
  private readonly runningAt = new Map<string, number>();
  private readonly addedAt = new Map<string, number>();
  private readonly waiting = new Map<string, { at: number; priority: number }>();
  private readonly held = new Set<string>();
  private readonly heap = new DelayHeap();
  private timer?: Timer;
  private timerAt = Infinity;
  private readonly clock: Clock;
  private getters: ((item: string | undefined) => void)[] = [];
  private drainers: (() => void)[] = [];
  private shuttingDown = false;
  readonly rateLimiter: RateLimiter;
  private readonly metrics?: QueueMetrics;

  constructor(
    readonly name: string,
    options: WorkQueueOptions = {},
  ) {
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter();
    this.metrics = options.metrics;
    this.clock = options.clock ?? systemClock;
  }

  /** Items waiting to be handed out (not counting delayed or in-flight ones). */
  get length(): number {
    return this.ready.size;
  }

  get inFlight(): number {
    return this.processing.size;
  }

  get delayed(): number {
    return this.waiting.size;
  }

  /** Monotonic time now, on the queue's clock (what `inspect` and `processingSince` are measured on). */
  now(): number {
    return this.clock.monotonic();
  }

  /** How long each item being processed has been in flight (ms), for unfinished-work metrics. */
  processingAges(): number[] {
    const now = this.clock.monotonic();
    return [...this.processing.values()].map((since) => now - since);
  }

  /** What the queue holds right now (for /debug/queue): a copy, never the live structures. */
  inspect(): {
    queued: string[];
    /** Queued items whose priority is not normal. */
    priorities: Record<string, number>;
    delayed: [string, number][];
    processing: [string, number][];
    held: string[];
  } {
    const queued = this.ready.list();
    return {
      queued: queued.map((q) => q.item),
      priorities: Object.fromEntries(queued.filter((q) => q.priority !== Priority.normal).map((q) => [q.item, q.priority])),
      delayed: [...this.waiting].map(([item, w]) => [item, w.at]),
      processing: [...this.processing],
      held: [...this.held],
    };
  }

  /** Queues the item at `priority`; queued already, it keeps its place unless this priority is higher. */
  add(item: string, priority: number = Priority.normal): void {
    if (this.shuttingDown) return;
    const pending = this.dirty.get(item);
    if (pending !== undefined) {
      if (priority <= pending) return;
      this.dirty.set(item, priority);
      if (this.ready.has(item)) this.ready.push(item, priority); // moves up
      return;
    }
    this.metrics?.add();
    this.dirty.set(item, priority);
    this.addedAt.set(item, this.clock.monotonic());
    if (this.processing.has(item)) return; // re-queued by done()
    if (this.held.has(item)) return; // queued by release()
    this.push(item, priority);
  }

  private push(item: string, priority: number) {
    const getter = this.getters.shift();
    if (getter) {
      this.dirty.delete(item);
      this.startProcessing(item, priority);
      getter(item);
      return;
    }
    this.ready.push(item, priority);
    this.metrics?.depth(this.length);
  }

  private startProcessing(item: string, priority: number) {
    const now = this.clock.monotonic();
    const added = this.addedAt.get(item);
    if (added !== undefined) this.metrics?.queued((now - added) / 1000);
    this.addedAt.delete(item);
    this.processing.set(item, now);
    this.runningAt.set(item, priority);
  }

  /** The priority an item in flight was handed out with. */
  priorityOf(item: string): number | undefined {
    return this.runningAt.get(item);
  }

  /**
   * Adds the item after `delayMs`; for one item the earliest pending time and the highest priority
   * win (as controller-runtime's priority queue: the min of durations, the max of priorities).
   */
  addAfter(item: string, delayMs: number, priority: number = Priority.normal): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) return this.add(item, priority);
    const at = this.clock.monotonic() + delayMs;
    const existing = this.waiting.get(item);
    if (existing !== undefined) {
      existing.priority = Math.max(existing.priority, priority);
      if (existing.at <= at) return;
    }
    this.waiting.set(item, { at, priority: Math.max(existing?.priority ?? priority, priority) });
    this.heap.push(at, item);
    this.schedule();
  }

  /** Adds the item after its rate limiter's delay (exponential per item, bounded overall), and at least `floorMs`. */
  addRateLimited(item: string, floorMs = 0, priority: number = Priority.normal): void {
    this.metrics?.retry();
    this.addAfter(item, Math.max(floorMs, this.rateLimiter.when(item)), priority);
  }

  /** Clears the item's failure history (after a success). */
  forget(item: string): void {
    this.rateLimiter.forget(item);
  }

  retries(item: string): number {
    return this.rateLimiter.retries(item);
  }

  private schedule() {
    const next = this.heap.peek();
    if (!next) return;
    if (this.timer && this.timerAt <= next.at) return;
    this.timer?.cancel();
    this.timerAt = next.at;
    this.timer = this.clock.setTimer(next.at - this.clock.monotonic(), () => this.fire());
  }

  private fire() {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = this.clock.monotonic();
    for (let top = this.heap.peek(); top && top.at <= now; top = this.heap.peek()) {
      this.heap.pop();
      // Skip entries superseded by an earlier addAfter of the same item.
      const entry = this.waiting.get(top.item);
      if (entry?.at !== top.at) continue;
      this.waiting.delete(top.item);
      this.add(top.item, entry.priority);
    }
    this.schedule();
  }

  /** The next item to process, waiting for one if needed; undefined once the queue shuts down. */
  get(): Promise<string | undefined> {
    if (this.shuttingDown) return Promise.resolve(undefined);
    const next = this.ready.shift();
    if (next) {
      this.dirty.delete(next.item);
      this.startProcessing(next.item, next.priority);
      this.metrics?.depth(this.length);
      return Promise.resolve(next.item);
    }
    return new Promise((resolve) => this.getters.push(resolve));
  }

  /** Marks the item processed; if it was added meanwhile, it is queued again now. */
  done(item: string): void {
    const started = this.processing.get(item);
    if (started === undefined) return;
    this.processing.delete(item);
    this.runningAt.delete(item);
    this.metrics?.worked((this.clock.monotonic() - started) / 1000);
    const pending = this.dirty.get(item);
    if (pending !== undefined && !this.shuttingDown && !this.held.has(item)) this.push(item, pending);
    if (!this.processing.size) {
      const drainers = this.drainers;
      this.drainers = [];
      for (const d of drainers) d();
    }
  }

  /**
   * Holds an item back: adds are remembered (once, as always) but it is not handed to a worker until
   * release(). The controller holds a key whose last reconcile wrote something the cache has not
   * shown yet, so the next reconcile reads its own writes instead of repeating them, and no worker
   * waits meanwhile.
   */
  hold(item: string): void {
    this.held.add(item);
  }

  /** Ends a hold; an item added meanwhile is queued now. */
  release(item: string): void {
    if (!this.held.delete(item)) return;
    const pending = this.dirty.get(item);
    if (pending !== undefined && !this.processing.has(item) && !this.shuttingDown) this.push(item, pending);
  }

  /** Stops handing out items and releases idle workers. Queued items are dropped (they resync on restart). */
  shutDown(): void {
    this.shuttingDown = true;
    this.timer?.cancel();
    const getters = this.getters;
    this.getters = [];
    for (const g of getters) g(undefined);
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Resolves when no item is being processed. */
  drain(): Promise<void> {
    if (!this.processing.size) return Promise.resolve();
    return new Promise((resolve) => this.drainers.push(resolve));
  }
}
