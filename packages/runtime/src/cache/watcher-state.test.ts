import { describe, expect, it } from 'vitest';
import { ApiError } from '../client/errors.js';
import {
  DEFAULT_WATCHER_CONFIG,
  initialWatcherState,
  step,
  type WatcherAction,
  type WatcherConfig,
  type WatcherEvent,
  type WatcherState,
} from './watcher-state.js';

const gone = new ApiError('WATCH', '/api/v1/configmaps', 410, { reason: 'Expired', code: 410, message: 'too old resource version: 5 (90)' });
const tooLarge = new ApiError('GET', '/api/v1/configmaps', 504, {
  reason: 'Timeout',
  code: 504,
  message: 'Too large resource version: 900, current: 120',
  details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }] },
});
const tooLargeOldServer = new ApiError('GET', '/api/v1/configmaps', 504, {
  reason: 'Timeout',
  code: 504,
  message: 'Too large resource version: 900, current: 120',
});
const forbidden = new ApiError('GET', '/api/v1/configmaps', 403, { reason: 'Forbidden', code: 403, message: 'configmaps is forbidden' });
const reset = new Error('socket hang up');

const paginated = { ...DEFAULT_WATCHER_CONFIG, streamingLists: false };

/**
 * Runs events at monotonic times through step; jitter fixed at its midpoint (delay = the base).
 * Paginated LISTs unless `config` says otherwise: most rows are about what follows a full list,
 * which is the same either way; the streaming rows are below.
 */
function run(events: [number, WatcherEvent][], from: WatcherState = initialWatcherState(), config: WatcherConfig = paginated) {
  let state = from;
  const actions: WatcherAction[] = [];
  const failures: number[] = [];
  for (const [now, e] of events) {
    const t = step(state, e, { now, random: () => 0.5, config });
    state = t.state;
    actions.push(t.action);
    failures.push(state.failures);
  }
  return { state, actions, last: actions[actions.length - 1]!, failures };
}

const watching = (rv = '100', at = 0): [number, WatcherEvent][] => [
  [at, { type: 'start' }],
  [at, { type: 'listed', resourceVersion: rv }],
  [at, { type: 'opened' }],
];
/** A watch that opens and fails at once, `n` times, one backoff apart. */
const flapping = (n: number, from: number) => {
  const events: [number, WatcherEvent][] = [];
  let t = from;
  for (let i = 0; i < n; i++) {
    events.push([t, { type: 'waited' }], [t, { type: 'opened' }], [t + 10, { type: 'ended', error: reset }]);
    t += 60_000;
  }
  return events;
};

describe('the watcher state machine', () => {
  it.each<[string, [number, WatcherEvent][], WatcherAction, Partial<WatcherState>]>([
    ['starts with a LIST', [[0, { type: 'start' }]], { do: 'list' }, { phase: 'listing', synced: false }],
    [
      'watches from the listed resourceVersion',
      [
        [0, { type: 'start' }],
        [0, { type: 'listed', resourceVersion: '42' }],
      ],
      { do: 'watch', resourceVersion: '42' },
      { synced: true, resourceVersion: '42' },
    ],
    [
      'backs off after a refused LIST, and counts it',
      [
        [0, { type: 'start' }],
        [0, { type: 'listFailed', error: forbidden }],
      ],
      { do: 'wait', ms: 800 },
      { failures: 1, phase: 'waiting', lastError: forbidden },
    ],
    ['relists at once on 410 Gone', [...watching(), [5, { type: 'ended', error: gone }]], { do: 'list' }, { resourceVersion: '', failures: 0 }],
    [
      'spaces out relists when 410s come back to back',
      [
        ...watching(),
        [5, { type: 'ended', error: gone }],
        [6, { type: 'listed', resourceVersion: '101' }],
        [7, { type: 'opened' }],
        [8, { type: 'ended', error: gone }],
      ],
      { do: 'wait', ms: 800 },
      { resourceVersion: '' },
    ],
    [
      'relists on a too-large resourceVersion instead of asking for it again',
      [...watching('900'), [5, { type: 'ended', error: tooLarge }]],
      { do: 'list' },
      { resourceVersion: '' },
    ],
    [
      'knows a too-large resourceVersion from an older server by its message',
      [...watching('900'), [5, { type: 'ended', error: tooLargeOldServer }]],
      { do: 'list' },
      { resourceVersion: '' },
    ],
    [
      'retries a reset watch from where it was, after a backoff',
      [...watching('100'), [50, { type: 'delivered', event: 'MODIFIED', resourceVersion: '130' }], [6_000, { type: 'ended', error: reset }]],
      { do: 'wait', ms: 800 },
      { resourceVersion: '130', failures: 1, connected: false },
    ],
    [
      'resumes at once when the server ends a watch at its timeout',
      [...watching('100'), [300_000, { type: 'ended' }]],
      { do: 'watch', resourceVersion: '100' },
      { failures: 0, phase: 'watching' },
    ],
    ['treats a watch closed as soon as it opened as a failure', [...watching('100'), [20, { type: 'ended' }]], { do: 'wait', ms: 800 }, { failures: 1 }],
    [
      'learns that bookmarks come',
      [...watching(), [60_000, { type: 'delivered', event: 'BOOKMARK', resourceVersion: '150' }]],
      { do: 'continue' },
      { bookmarks: true, resourceVersion: '150' },
    ],
    [
      'ignores a stale sustained timer once the watch has ended',
      [...watching(), [10, { type: 'ended', error: reset }], [5_000, { type: 'sustained' }]],
      { do: 'continue' },
      { failures: 1 },
    ],
    [
      'ends on stop, and stays stopped',
      [...watching(), [1, { type: 'stop' }], [2, { type: 'waited' }]],
      { do: 'stop' },
      { phase: 'stopped', connected: false },
    ],
  ])('%s', (_, events, action, state) => {
    const r = run(events);
    expect(r.last).toEqual(action);
    expect(r.state).toMatchObject(state);
  });

  it.each<[string, [number, WatcherEvent][], WatcherAction, Partial<WatcherState>, WatcherConfig?]>([
    [
      'interrupts an open watch when its selection changes, to list again',
      [...watching('100'), [50, { type: 'reselected' }]],
      { do: 'interrupt' },
      { resourceVersion: '', reselected: true },
    ],
    [
      'lists again once the interrupted watch has ended, with no failure counted',
      [...watching('100'), [50, { type: 'reselected' }], [51, { type: 'ended', error: new Error('interrupted') }]],
      { do: 'list' },
      { resourceVersion: '', reselected: false, failures: 0, phase: 'listing' },
    ],
    [
      'streams the new selection where lists stream',
      [
        [0, { type: 'start' }],
        [1, { type: 'opened' }],
        [2, { type: 'initialEventsEnded', resourceVersion: '100' }],
        [50, { type: 'reselected' }],
        [51, { type: 'ended', error: new Error('interrupted') }],
      ],
      { do: 'streamList' },
      { phase: 'streaming', reselected: false, failures: 0 },
      DEFAULT_WATCHER_CONFIG,
    ],
    [
      'interrupts a streaming list of the old selection; its end is not taken',
      [
        [0, { type: 'start' }],
        [1, { type: 'opened' }],
        [2, { type: 'reselected' }],
        [3, { type: 'initialEventsEnded', resourceVersion: '100' }],
      ],
      { do: 'continue' },
      { phase: 'streaming', resourceVersion: '', reselected: true },
      DEFAULT_WATCHER_CONFIG,
    ],
    [
      'takes no resourceVersion from events of the old selection',
      [...watching('100'), [50, { type: 'reselected' }], [51, { type: 'delivered', event: 'MODIFIED', resourceVersion: '130' }]],
      { do: 'continue' },
      { resourceVersion: '' },
    ],
    [
      'lists again after a LIST of the old selection lands',
      [
        [0, { type: 'start' }],
        [1, { type: 'reselected' }],
        [2, { type: 'listed', resourceVersion: '100' }],
      ],
      { do: 'list' },
      { synced: true, resourceVersion: '', reselected: false },
    ],
    [
      'lists the new selection after a backoff, not a watch from the old one',
      [...watching('100'), [10, { type: 'ended', error: reset }], [20, { type: 'reselected' }], [900, { type: 'waited' }]],
      { do: 'list' },
      { resourceVersion: '', reselected: false },
    ],
  ])('%s', (_, events, action, state, config) => {
    const r = run(events, initialWatcherState(), config);
    expect(r.last).toEqual(action);
    expect(r.state).toMatchObject(state);
  });

  it('keeps backing off a watch that opens and fails at once: an open is not health', () => {
    const r = run([...watching(), [10, { type: 'ended', error: reset }], ...flapping(6, 1_000)]);
    const waits = r.actions.filter((a): a is { do: 'wait'; ms: number } => a.do === 'wait').map((a) => a.ms);
    expect(waits).toEqual([800, 1_600, 3_200, 6_400, 12_800, 25_600, 30_000]);
    // Readiness reads `failures`: it never drops to 0 between two failed attempts (no flapping).
    expect(r.failures.slice(4)).not.toContain(0);
    expect(r.state.failures).toBe(7);
  });

  it('forgets failures once a watch proves healthy, by an event or by staying open', () => {
    const failed = run([...watching(), [10, { type: 'ended', error: reset }], [900, { type: 'waited' }], [900, { type: 'opened' }]]);
    expect(failed.state.failures).toBe(1);
    expect(run([[950, { type: 'delivered', event: 'ADDED', resourceVersion: '101' }]], failed.state).state).toMatchObject({
      failures: 0,
      lastError: undefined,
    });
    expect(run([[5_900, { type: 'sustained' }]], failed.state).state).toMatchObject({ failures: 0, lastError: undefined });
  });

  it('starts the backoff over only after two quiet minutes', () => {
    const twice = run([...watching(), [10, { type: 'ended', error: reset }], ...flapping(2, 1_000)]);
    expect(twice.last).toEqual({ do: 'wait', ms: 3_200 });
    const later = run(
      [
        [61_000, { type: 'waited' }],
        [61_000, { type: 'opened' }],
        [61_010 + 120_001, { type: 'ended', error: reset }],
      ],
      twice.state,
    );
    expect(later.last).toEqual({ do: 'wait', ms: 800 });
  });

  it('skips the rest of a backoff when the API server answers again, and restarts it', () => {
    const waiting = run([...watching(), [10, { type: 'ended', error: reset }], ...flapping(3, 1_000)]);
    expect(waiting.state.phase).toBe('waiting');
    const r = run(
      [
        [130_000, { type: 'retryNow' }],
        [130_001, { type: 'opened' }],
        [130_002, { type: 'ended', error: reset }],
      ],
      waiting.state,
    );
    expect(r.actions[0]).toEqual({ do: 'watch', resourceVersion: '100' });
    expect(r.last).toEqual({ do: 'wait', ms: 800 });
  });

  it('lists again after a failed LIST, never a watch without a version', () => {
    const r = run([
      [0, { type: 'start' }],
      [0, { type: 'listFailed', error: reset }],
      [900, { type: 'waited' }],
    ]);
    expect(r.last).toEqual({ do: 'list' });
  });
});

describe('the watcher state machine with streaming lists (the default)', () => {
  const invalid = new ApiError('WATCH', '/api/v1/configmaps', 422, {
    reason: 'Invalid',
    code: 422,
    message:
      'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
  });
  const streamed = (rv = '100'): [number, WatcherEvent][] => [
    [0, { type: 'start' }],
    [0, { type: 'opened' }],
    [1, { type: 'delivered', event: 'ADDED', resourceVersion: '90' }],
    [2, { type: 'initialEventsEnded', resourceVersion: rv }],
  ];
  it.each<[string, [number, WatcherEvent][], WatcherAction, Partial<WatcherState>]>([
    ['starts with a streaming list', [[0, { type: 'start' }]], { do: 'streamList' }, { phase: 'streaming', synced: false }],
    [
      'has nothing to resume from while the initial events come',
      [...streamed().slice(0, 3)],
      { do: 'continue' },
      { phase: 'streaming', resourceVersion: '', synced: false, connected: true },
    ],
    [
      'is synced at the initial-events-end bookmark, and the same stream goes on as the watch',
      streamed('100'),
      { do: 'continue' },
      { phase: 'watching', resourceVersion: '100', synced: true, connected: true },
    ],
    [
      'follows the watch once synced',
      [...streamed('100'), [3, { type: 'delivered', event: 'MODIFIED', resourceVersion: '101' }]],
      { do: 'continue' },
      { resourceVersion: '101' },
    ],
    [
      'resumes a synced stream as a plain watch',
      [...streamed('100'), [300_000, { type: 'ended' }]],
      { do: 'watch', resourceVersion: '100' },
      { phase: 'watching' },
    ],
    [
      'falls back to paginated LISTs, at once and for good, when the server refuses to stream',
      [
        [0, { type: 'start' }],
        [0, { type: 'ended', error: invalid }],
      ],
      { do: 'list' },
      { phase: 'listing', streamRefused: true, failures: 0 },
    ],
    [
      'lists by pages after a 410 once streaming was refused',
      [
        [0, { type: 'start' }],
        [0, { type: 'ended', error: invalid }],
        [1, { type: 'listed', resourceVersion: '100' }],
        [2, { type: 'opened' }],
        [3, { type: 'ended', error: gone }],
      ],
      { do: 'list' },
      { streamRefused: true },
    ],
    [
      'streams again after a 410 where streaming works',
      [...streamed('100'), [3, { type: 'ended', error: gone }]],
      { do: 'streamList' },
      { phase: 'streaming', resourceVersion: '' },
    ],
    [
      'takes a stream cut before its end as a failure, and streams again from nothing after the backoff',
      [...streamed().slice(0, 3), [3, { type: 'ended', error: reset }], [900, { type: 'waited' }]],
      { do: 'streamList' },
      { resourceVersion: '', failures: 1, synced: false },
    ],
    [
      'takes a clean end before the initial events ended as a failure (a server that ignored sendInitialEvents)',
      [...streamed().slice(0, 3), [400_000, { type: 'ended' }]],
      { do: 'wait', ms: 800 },
      { resourceVersion: '', failures: 1 },
    ],
    [
      'does not take a refusal after the stream opened for a refusal to stream',
      [...streamed().slice(0, 2), [3, { type: 'ended', error: invalid }]],
      { do: 'wait', ms: 800 },
      { streamRefused: false, failures: 1 },
    ],
    [
      'backs off a forbidden streaming list like a forbidden LIST',
      [
        [0, { type: 'start' }],
        [0, { type: 'ended', error: forbidden }],
      ],
      { do: 'wait', ms: 800 },
      { streamRefused: false, failures: 1 },
    ],
  ])('%s', (_, events, action, state) => {
    const r = run(events, initialWatcherState(), DEFAULT_WATCHER_CONFIG);
    expect(r.last).toEqual(action);
    expect(r.state).toMatchObject(state);
  });
});
