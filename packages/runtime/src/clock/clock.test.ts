import { describe, expect, it } from 'vitest';
import { FakeClock, sleep, systemClock } from './clock.js';

describe('sleep', () => {
  it('ends early on abort and leaves no listener behind when it runs its course', async () => {
    const ac = new AbortController();
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    for (let i = 0; i < 20; i++) await sleep(1, ac.signal);
    await new Promise((r) => setImmediate(r));
    process.off('warning', onWarning);
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    const t0 = systemClock.monotonic();
    const long = sleep(10_000, ac.signal);
    ac.abort();
    await long;
    expect(systemClock.monotonic() - t0).toBeLessThan(100);
  });
});

describe('FakeClock', () => {
  it('fires timers in order, each at its own time, as time advances', () => {
    const clock = new FakeClock(0);
    const fired: [string, number, number][] = [];
    clock.setTimer(30, () => fired.push(['c', clock.monotonic(), clock.now()]));
    clock.setTimer(10, () => fired.push(['a', clock.monotonic(), clock.now()]));
    const cancelled = clock.setTimer(20, () => fired.push(['x', 0, 0]));
    clock.setTimer(20, () => fired.push(['b', clock.monotonic(), clock.now()]));
    cancelled.cancel();
    clock.advance(25);
    expect(fired).toEqual([
      ['a', 10, 10],
      ['b', 20, 20],
    ]);
    clock.advance(5);
    expect(fired.map((f) => f[0])).toEqual(['a', 'b', 'c']);
    expect(clock.pending).toBe(0);
  });

  it('steps the wall clock alone: timers, sleeps and durations do not move', () => {
    const clock = new FakeClock(1_000_000);
    let fired = false;
    clock.setTimer(1_000, () => (fired = true));
    clock.stepWall(-3_600_000);
    clock.stepWall(7_200_000);
    expect(fired).toBe(false);
    expect(clock.monotonic()).toBe(0);
    expect(clock.now()).toBe(1_000_000 + 3_600_000);
    clock.advance(1_000);
    expect(fired).toBe(true);
  });

  it('lets a loop that sleeps, wakes and sleeps again keep up with tick', async () => {
    const clock = new FakeClock(0);
    const wakes: number[] = [];
    const ac = new AbortController();
    const loop = (async () => {
      while (!ac.signal.aborted) {
        await clock.sleep(100, ac.signal);
        if (!ac.signal.aborted) wakes.push(clock.monotonic());
      }
    })();
    await clock.tick(350);
    ac.abort();
    await loop;
    expect(wakes).toEqual([100, 200, 300]);
  });
});
