import { describe, expect, it } from 'vitest';
import { ApiError } from '../client/errors.js';
import { classify, type AttemptOutcome, type Decision } from './outcome.js';
import { TerminalError } from './result.js';

const api = (code: number, reason: string) => new ApiError('PATCH', '/api/v1/namespaces/a/configmaps/b', code, { code, reason, message: reason });

describe("classify: an attempt's outcome → what happens next", () => {
  it.each<[string, AttemptOutcome, boolean, Partial<Decision>]>([
    ['done', { kind: 'returned', result: undefined }, false, { queue: { action: 'forget' }, result: 'success', report: 'no' }],
    ['done, with an empty result', { kind: 'returned', result: {} }, false, { queue: { action: 'forget' }, result: 'success' }],
    [
      'again later, as asked',
      { kind: 'returned', result: { requeueAfter: 30_000 } },
      false,
      { queue: { action: 'after', ms: 30_000 }, result: 'requeue_after' },
    ],
    ['requeueAfter 0 is done', { kind: 'returned', result: { requeueAfter: 0 } }, false, { queue: { action: 'forget' }, result: 'success' }],
    ['again with backoff, as asked', { kind: 'returned', result: { requeue: true } }, false, { queue: { action: 'backoff' }, result: 'requeue', report: 'no' }],
    [
      'a thrown error: backoff, reported once it persists',
      { kind: 'threw', error: new Error('boom') },
      false,
      { queue: { action: 'backoff' }, result: 'error', report: 'when-persistent', log: 'error', denied: false },
    ],
    [
      'a terminal error: no retry, reported now',
      { kind: 'threw', error: new TerminalError('bad spec') },
      false,
      { queue: { action: 'forget' }, report: 'now', log: 'terminal' },
    ],
    ['a conflict: a quiet retry', { kind: 'threw', error: api(409, 'Conflict') }, false, { queue: { action: 'backoff' }, report: 'no', log: 'conflict' }],
    [
      'a denied permission: a slower retry, and a watch on the permission',
      { kind: 'threw', error: api(403, 'Forbidden') },
      false,
      { queue: { action: 'backoff', floorMs: 1_000 }, report: 'when-persistent', denied: true },
    ],
    [
      'a timeout: backoff, reported once it persists',
      { kind: 'timedOut', timeoutMs: 120_000 },
      false,
      { queue: { action: 'backoff' }, result: 'error', report: 'when-persistent', log: 'timeout' },
    ],
    [
      'any failure once the term ended: nothing to retry or report',
      { kind: 'threw', error: api(403, 'Forbidden') },
      true,
      { queue: { action: 'none' }, result: 'error', report: 'no', log: 'interrupted', denied: false },
    ],
    ['a timeout once the term ended', { kind: 'timedOut', timeoutMs: 1 }, true, { queue: { action: 'none' }, log: 'interrupted' }],
    ['a success still counts when the term ended meanwhile', { kind: 'returned', result: undefined }, true, { queue: { action: 'forget' }, result: 'success' }],
  ])('%s', (_, outcome, termEnded, decision) => {
    expect(classify(outcome, termEnded)).toMatchObject(decision);
  });
});
