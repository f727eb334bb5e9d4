import { describe, expect, it } from 'vitest';
import { ItemExponentialRateLimiter } from './rate-limiters.js';
import { Priority, WorkQueue } from './work-queue.js';

const tick = (ms = 0) => new Promise((r) => setTimeout(r, ms));

describe('WorkQueue', () => {
  it('holds a waiting item once however often it is added', async () => {
    const q = new WorkQueue('t');
    q.add('a');
    q.add('a');
    q.add('b');
    q.add('a');
    expect(q.length).toBe(2);
    expect(await q.get()).toBe('a');
    expect(await q.get()).toBe('b');
  });

  it('never hands an item being processed to a second worker, and re-runs it once if it changed meanwhile', async () => {
    const q = new WorkQueue('t');
    q.add('a');
    const first = await q.get();
    q.add('a');
    q.add('a');
    // a second worker asking now gets nothing while 'a' is in flight
    let second: string | undefined = 'none';
    void q.get().then((v) => (second = v));
    await tick();
    expect(second).toBe('none');
    q.done(first!);
    await tick();
    expect(second).toBe('a');
    q.done('a');
    expect(q.length).toBe(0);
  });

  it('delays adds, keeping the earliest time for an item', async () => {
    const q = new WorkQueue('t');
    q.addAfter('a', 200);
    q.addAfter('a', 20);
    q.addAfter('a', 500);
    expect(q.length).toBe(0);
    expect(q.delayed).toBe(1);
    const t0 = Date.now();
    expect(await q.get()).toBe('a');
    const waited = Date.now() - t0;
    expect(waited).toBeGreaterThanOrEqual(15);
    expect(waited).toBeLessThan(190);
    await tick(400);
    expect(q.length).toBe(0); // the superseded 200 ms and 500 ms entries did not fire again
  });

  it("holds items delayed beyond setTimeout's limit (renewals weeks ahead) instead of firing them at once", async () => {
    const q = new WorkQueue('t');
    q.addAfter('renew', 60 * 24 * 3_600_000); // 60 days
    await tick(50);
    expect(q.length).toBe(0);
    expect(q.delayed).toBe(1);
    q.shutDown();
  });

  it('backs off per item exponentially until forgotten', () => {
    const rl = new ItemExponentialRateLimiter(5, 1_000_000);
    expect([1, 2, 3, 4, 5].map(() => rl.when('x'))).toEqual([5, 10, 20, 40, 80]);
    expect(rl.when('y')).toBe(5);
    for (let i = 0; i < 40; i++) rl.when('x');
    expect(rl.when('x')).toBe(1_000_000);
    rl.forget('x');
    expect(rl.when('x')).toBe(5);
  });

  it('bounds retries overall with the token bucket of the default limiter', () => {
    const q = new WorkQueue('t');
    // 100 distinct items fail once: the burst absorbs them, then the 10 qps bucket spaces the rest.
    const delays = Array.from({ length: 120 }, (_, i) => q.rateLimiter.when(`item-${i}`));
    expect(delays.slice(0, 100).every((d) => d === 5)).toBe(true);
    expect(delays[119]).toBeGreaterThan(1_500);
  });

  it('releases idle workers on shutdown and drains in-flight work', async () => {
    const q = new WorkQueue('t');
    q.add('a');
    const a = await q.get();
    const idle = q.get();
    q.shutDown();
    expect(await idle).toBeUndefined();
    q.add('b'); // ignored after shutdown
    expect(q.length).toBe(0);
    let drained = false;
    const d = q.drain().then(() => (drained = true));
    await tick();
    expect(drained).toBe(false);
    q.done(a!);
    await d;
    expect(drained).toBe(true);
  });

  it('reports adds, depth, retries and durations to its metrics', async () => {
    const seen: string[] = [];
    const q = new WorkQueue('t', {
      metrics: {
        add: () => seen.push('add'),
        depth: (n) => seen.push(`depth=${n}`),
        retry: () => seen.push('retry'),
        queued: () => seen.push('queued'),
        worked: () => seen.push('worked'),
      },
    });
    q.add('a');
    q.add('a');
    const item = await q.get();
    q.done(item!);
    q.addRateLimited('a');
    expect(seen).toEqual(['add', 'depth=1', 'queued', 'depth=0', 'worked', 'retry']);
  });

  it('holds an item back until released, remembering adds made meanwhile once', async () => {
    const q = new WorkQueue('t');
    q.add('a');
    const a = await q.get();
    q.hold('a');
    q.add('a');
    q.add('a');
    q.done(a!);
    q.add('b');
    expect(await q.get()).toBe('b');
    expect(q.length).toBe(0);
    q.release('a');
    expect(q.length).toBe(1);
    expect(await q.get()).toBe('a');
    q.hold('c');
    q.release('c');
    expect(q.length).toBe(0); // nothing was added while held: nothing to queue
  });

  describe('priorities', () => {
    // Each row: adds in order ([item, priority]), and the order items are handed out.
    const cases: [string, [string, number][], string[]][] = [
      [
        'the highest priority first, FIFO within one',
        [
          ['a', Priority.low],
          ['b', Priority.low],
          ['c', 0],
          ['d', 5],
          ['e', 0],
        ],
        ['d', 'c', 'e', 'a', 'b'],
      ],
      [
        'an item added again at a higher priority moves up',
        [
          ['a', Priority.low],
          ['b', Priority.low],
          ['b', 0],
        ],
        ['b', 'a'],
      ],
      [
        'added again at a lower priority it keeps its place and priority',
        [
          ['a', 0],
          ['b', 0],
          ['a', Priority.low],
        ],
        ['a', 'b'],
      ],
      [
        'moved up, it is still handed out once',
        [
          ['a', Priority.low],
          ['a', 0],
          ['a', 5],
          ['b', 0],
        ],
        ['a', 'b'],
      ],
      [
        'a user edit passes ten thousand replayed objects',
        [...Array.from({ length: 10_000 }, (_, i) => [`r${i}`, Priority.low] as [string, number]), ['edit', 0]],
        ['edit', 'r0', 'r1'],
      ],
    ];
    it.each(cases)('%s', async (_, adds, first) => {
      const q = new WorkQueue('t');
      for (const [item, p] of adds) q.add(item, p);
      expect(q.length).toBe(new Set(adds.map(([i]) => i)).size);
      const out: string[] = [];
      for (let i = 0; i < first.length; i++) out.push((await q.get())!);
      expect(out).toEqual(first);
    });

    it('re-queues an item added while in flight at the highest priority it was added with', async () => {
      const q = new WorkQueue('t');
      q.add('a', Priority.low);
      const a = await q.get();
      expect(q.priorityOf('a')).toBe(Priority.low);
      q.add('a', Priority.low);
      q.add('a', 3);
      q.add('b', 0);
      q.done(a!);
      expect(await q.get()).toBe('a');
      expect(q.priorityOf('a')).toBe(3);
    });

    it('delayed adds keep the earliest time and the highest priority', async () => {
      const q = new WorkQueue('t');
      q.addAfter('a', 20, Priority.low);
      q.addAfter('a', 200, 0); // later: the time stays 20 ms, the priority rises to normal
      q.add('b', Priority.low);
      await tick(60);
      expect(q.inspect().queued).toEqual(['a', 'b']);
      expect(q.inspect().priorities).toEqual({ b: Priority.low });
    });
  });
});
