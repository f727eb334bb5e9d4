import { describe, expect, it } from 'vitest';
import { sleep } from './clock.js';

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
    const t0 = Date.now();
    const long = sleep(10_000, ac.signal);
    ac.abort();
    await long;
    expect(Date.now() - t0).toBeLessThan(100);
  });
});
