import { describe, expect, it } from 'vitest';
import { FakeClock } from '../clock/clock.js';
import { Debouncer } from './debounce.js';
import { PerObjectLimit } from './per-object-limit.js';

describe('Debouncer', () => {
  const setup = () => {
    const clock = new FakeClock();
    const out: [string, number, number][] = [];
    const d = new Debouncer(clock, 100, 500, (k, p) => out.push([k, p, clock.monotonic()]));
    return { clock, out, d };
  };

  it('releases a key once it has been quiet for the window, once per burst, with the highest priority', () => {
    const { clock, out, d } = setup();
    d.push('a', -100);
    clock.advance(60);
    d.push('a', 0);
    clock.advance(60);
    d.push('a', -100);
    expect(out).toEqual([]);
    clock.advance(100);
    expect(out).toEqual([['a', 0, 220]]);
    expect(d.size).toBe(0);
  });

  it('releases a key written to without pause at the latest maxWait after the first event', () => {
    const { clock, out, d } = setup();
    for (let t = 0; t < 1_000; t += 50) {
      d.push('busy', 0);
      clock.advance(50);
    }
    expect(out.map(([, , at]) => at)).toEqual([500, 1000]);
  });

  it('keeps keys apart, and forgets everything when cleared', () => {
    const { clock, out, d } = setup();
    d.push('a', 0);
    clock.advance(50);
    d.push('b', 0);
    clock.advance(60);
    expect(out.map(([k]) => k)).toEqual(['a']);
    d.clear();
    clock.advance(1_000);
    expect(out.map(([k]) => k)).toEqual(['a']);
  });
});

describe('PerObjectLimit', () => {
  it('lets `reconciles` through per window and says how long the next must wait', () => {
    const l = new PerObjectLimit(2, 1_000);
    expect(l.delay('a', 0)).toBe(0);
    l.started('a', 0);
    l.started('a', 100);
    expect(l.delay('a', 200)).toBe(800);
    expect(l.delay('b', 200)).toBe(0);
    expect(l.delay('a', 999)).toBe(1);
    expect(l.delay('a', 1_000)).toBe(0); // the start at 0 has left the window
    l.started('a', 1_000);
    expect(l.delay('a', 1_050)).toBe(50);
  });
  it('refuses a limit that cannot be met', () => {
    expect(() => new PerObjectLimit(0, 1_000)).toThrow(/at least 1/);
  });
});
