import { describe, expect, it } from 'vitest';
import { initialLifecycle, lifecycleStep, type LifecycleEffect, type LifecycleEvent, type LifecycleState, type Phase } from './lifecycle.js';

const path = (...events: LifecycleEvent['type'][]) => {
  let s: LifecycleState = initialLifecycle();
  const effects: LifecycleEffect[][] = [];
  for (const type of events) {
    const t = lifecycleStep(s, { type } as LifecycleEvent);
    s = t.state;
    effects.push(t.effects);
  }
  return { phase: s.phase, leading: s.leading, effects: effects[effects.length - 1], all: effects.flat() };
};

describe('the manager lifecycle', () => {
  it.each<[string, LifecycleEvent['type'][], Phase, LifecycleEffect[]]>([
    ['starts up', ['start'], 'starting', ['startUp']],
    ['campaigns once synced', ['start', 'synced'], 'standby', ['campaign']],
    ['begins a term when elected', ['start', 'synced', 'elected'], 'leading', ['beginTerm']],
    ['aborts the term when deposed, and stays up as a standby', ['start', 'synced', 'elected', 'deposed'], 'standby', ['abortTerm']],
    ['leads again when elected again', ['start', 'synced', 'elected', 'deposed', 'elected'], 'leading', ['beginTerm']],
    ['drains a term on stop', ['start', 'synced', 'elected', 'stop'], 'draining', ['drainTerm']],
    ['aborts a draining term when deposed mid-drain', ['start', 'synced', 'elected', 'stop', 'deposed'], 'draining', ['abortTerm']],
    ['aborts it only once', ['start', 'synced', 'elected', 'stop', 'deposed', 'deposed'], 'draining', []],
    ['begins no new term while draining', ['start', 'synced', 'elected', 'stop', 'deposed', 'elected'], 'draining', []],
    ['tears down once drained', ['start', 'synced', 'elected', 'stop', 'drained'], 'stopping', ['tearDown']],
    ['is stopped once closed', ['start', 'synced', 'elected', 'stop', 'drained', 'closed'], 'stopped', []],
    ['tears down a standby on stop: nothing to drain', ['start', 'synced', 'stop'], 'stopping', ['tearDown']],
    ['tears down after a failed start', ['start', 'startFailed'], 'stopping', ['tearDown']],
    ['tears down when stopped during start-up', ['start', 'stop'], 'stopping', ['tearDown']],
    ['ignores the end of a start-up it already stopped', ['start', 'stop', 'synced'], 'stopping', []],
    ['stops at once when never started', ['stop'], 'stopped', []],
    ['ignores a second stop', ['start', 'synced', 'elected', 'stop', 'stop'], 'draining', []],
    ['ignores everything once stopped', ['start', 'startFailed', 'closed', 'start'], 'stopped', []],
  ])('%s', (_, events, phase, effects) => {
    const r = path(...events);
    expect(r.phase).toBe(phase);
    expect(r.effects).toEqual(effects);
  });

  it('knows a draining term still leads until deposed', () => {
    expect(path('start', 'synced', 'elected', 'stop').leading).toBe(true);
    expect(path('start', 'synced', 'elected', 'stop', 'deposed').leading).toBe(false);
  });

  it('runs every effect of a whole life exactly once, in order', () => {
    expect(path('start', 'synced', 'elected', 'deposed', 'elected', 'stop', 'drained', 'closed').all).toEqual([
      'startUp',
      'campaign',
      'beginTerm',
      'abortTerm',
      'beginTerm',
      'drainTerm',
      'tearDown',
    ]);
  });
});
