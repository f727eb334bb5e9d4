import { getHeapStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../clock/clock.js';
import { silentLogger } from '../log/logger.js';
import {
  collectAllAvailableGarbage,
  compactionStep,
  COMPACTION_SAMPLE_MS,
  DEFAULT_COMPACTION_POLICY,
  IdleCompaction,
  initialCompactionState,
  type CompactionState,
  type HeapSample,
  workSince,
} from './idle-compaction.js';

const MiB = 2 ** 20;
const policy = DEFAULT_COMPACTION_POLICY; // idle 10 s; growth at least 32 MiB and 25 % of the floor

describe('compactionStep', () => {
  const idleFrom = (at: number): CompactionState => ({ floor: 100 * MiB, idleSince: at });
  it.each<[string, CompactionState, HeapSample, CompactionState, boolean]>([
    ['grown and idle long enough: compact', idleFrom(0), { at: 10_000, resident: 200 * MiB, busy: false }, idleFrom(0), true],
    ['grown, idle not long enough yet', idleFrom(0), { at: 9_999, resident: 200 * MiB, busy: false }, idleFrom(0), false],
    ['grown but busy: idleness starts over', idleFrom(0), { at: 60_000, resident: 200 * MiB, busy: true }, { floor: 100 * MiB, idleSince: undefined }, false],
    [
      'idle begins at the first idle sample',
      { floor: 100 * MiB, idleSince: undefined },
      { at: 5_000, resident: 200 * MiB, busy: false },
      idleFrom(5_000),
      false,
    ],
    // 25 % of a 100 MiB floor is 25 MiB, below the 32 MiB floor of worth: 31 MiB is not enough.
    ['small growth is not worth a pause', idleFrom(0), { at: 60_000, resident: 131 * MiB, busy: false }, idleFrom(0), false],
    ['32 MiB over a 100 MiB floor is', idleFrom(0), { at: 60_000, resident: 132 * MiB, busy: false }, idleFrom(0), true],
    // On a 400 MiB floor the share decides: 25 % is 100 MiB.
    [
      'a large heap needs its share',
      { floor: 400 * MiB, idleSince: 0 },
      { at: 60_000, resident: 499 * MiB, busy: false },
      { floor: 400 * MiB, idleSince: 0 },
      false,
    ],
    [
      'a large heap grown by its share',
      { floor: 400 * MiB, idleSince: 0 },
      { at: 60_000, resident: 500 * MiB, busy: false },
      { floor: 400 * MiB, idleSince: 0 },
      true,
    ],
    // V8 shrank the heap by itself: growth counts from the new low.
    ['the floor follows the heap down', idleFrom(0), { at: 60_000, resident: 80 * MiB, busy: false }, { floor: 80 * MiB, idleSince: 0 }, false],
  ])('%s', (_, state, sample, next, compact) => {
    expect(compactionStep(state, sample, policy)).toEqual({ state: next, compact });
  });

  it('after a compaction the floor is where it left the heap, so an unshrinkable heap is not compacted again', () => {
    let state = initialCompactionState(300 * MiB);
    for (let at = 0; at <= 60_000; at += COMPACTION_SAMPLE_MS) {
      const step = compactionStep(state, { at, resident: 300 * MiB, busy: false }, policy);
      expect(step.compact).toBe(false);
      state = step.state;
    }
  });
});

describe('workSince', () => {
  it('is busy while a controller has work, and at the first look after a webhook call', () => {
    let pending = false;
    let calls = 3;
    const busy = workSince(
      () => pending,
      () => calls,
    );
    expect(busy()).toBe(false); // calls before it was made are not new
    calls++;
    expect([busy(), busy()]).toEqual([true, false]);
    pending = true;
    expect(busy()).toBe(true);
    pending = false;
    calls += 5;
    expect([busy(), busy()]).toEqual([true, false]);
  });
});

describe('IdleCompaction', () => {
  /** A runnable on a fake clock over a heap the test sets, counting compactions (each halves the heap). */
  const harness = (start: number) => {
    const clock = new FakeClock();
    const heap = { resident: start, busy: false, compactions: 0 };
    const runnable = new IdleCompaction(
      () => heap.busy,
      clock,
      silentLogger(),
      policy,
      () => heap.resident,
      async () => {
        heap.compactions++;
        heap.resident /= 2;
      },
    );
    const abort = new AbortController();
    runnable.start(abort.signal);
    return { clock, heap, runnable, abort };
  };

  it('compacts once after a burst, when the queues have been empty for the idle time, and not again', async () => {
    const { clock, heap, runnable } = harness(100 * MiB);
    heap.busy = true;
    heap.resident = 400 * MiB; // the burst
    await clock.tick(60_000);
    expect(heap.compactions).toBe(0); // never while there is work
    heap.busy = false;
    await clock.tick(policy.idleMs - 1);
    expect(heap.compactions).toBe(0);
    await clock.tick(2 * COMPACTION_SAMPLE_MS);
    expect(heap.compactions).toBe(1);
    expect(heap.resident).toBe(200 * MiB);
    await clock.tick(10 * 60_000);
    expect(heap.compactions).toBe(1);
    runnable.stop();
  });

  // A webhook call holds the API server's request: the pause must not fall on a stream of them,
  // although none is ever in flight at the moment a sample is taken.
  it('does not compact while webhook calls come in between samples, and does once they stop', async () => {
    const clock = new FakeClock();
    const heap = { resident: 100 * MiB, compactions: 0 };
    let calls = 0;
    const runnable = new IdleCompaction(
      workSince(
        () => false,
        () => calls,
      ),
      clock,
      silentLogger(),
      policy,
      () => heap.resident,
      async () => void heap.compactions++,
    );
    runnable.start(new AbortController().signal);
    heap.resident = 400 * MiB;
    for (let t = 0; t < 60_000; t += 500) {
      calls++; // one call answered every 500 ms, each between two samples
      await clock.tick(500);
    }
    expect(heap.compactions).toBe(0);
    await clock.tick(policy.idleMs + 2 * COMPACTION_SAMPLE_MS);
    expect(heap.compactions).toBe(1);
    runnable.stop();
  });

  it('stops sampling when stopped', async () => {
    const { clock, heap, runnable } = harness(100 * MiB);
    runnable.stop();
    heap.resident = 400 * MiB;
    await clock.tick(60_000);
    expect(heap.compactions).toBe(0);
    expect(clock.pending).toBe(0);
  });
});

describe('collectAllAvailableGarbage', () => {
  // What the runnable relies on V8 for: the pages a burst grew the heap by go back, which regular
  // collections do not do. A Node upgrade that changed this would leave operators at their peak.
  it('gives back the pages a burst of garbage grew the heap by', async () => {
    const resident = () => getHeapStatistics().total_physical_size;
    const before = resident();
    let burst: { id: number; name: string }[][] | undefined = [];
    for (let i = 0; i < 400; i++) burst.push(Array.from({ length: 5_000 }, (_, id) => ({ id, name: `object ${i}/${id}` })));
    const grown = resident();
    expect(grown - before).toBeGreaterThan(100 * MiB);
    burst = undefined;
    await collectAllAvailableGarbage();
    expect(grown - resident()).toBeGreaterThan(80 * MiB);
  });
});
