import { describe, expect, it } from 'vitest';
import { ApiError } from '../client/errors.js';
import { judgeSyncWait, type PendingPart, type SyncWaitState } from './sync-wait.js';

const err = (code: number, reason: string) => new ApiError('GET', '/x', code, { code, reason, message: `${reason} says the server` });
const part = (lastError?: Error): PendingPart => ({ name: 'widgets.example.com in ops', resource: 'widgets.example.com', lastError });
const limits = { timeoutMs: 120_000, graceMs: 10_000 };

/** Feeds the same pending parts at these times; the last verdict. */
const run = (times: number[], pending: PendingPart[]) => {
  let state: SyncWaitState = { startedAt: 0 };
  let verdict = judgeSyncWait(pending, state, 0, limits);
  for (const t of times) {
    if (!verdict.wait) break;
    state = verdict.state;
    verdict = judgeSyncWait(pending, state, t, limits);
  }
  return verdict;
};

describe('judgeSyncWait', () => {
  it.each<[string, number[], PendingPart[], string | undefined]>([
    ['a list still under way: wait', [5_000], [part()], undefined],
    ['a transient error: wait', [60_000], [part(err(503, 'ServiceUnavailable'))], undefined],
    ['denied, within the grace: wait', [9_999], [part(err(403, 'Forbidden'))], undefined],
    ['denied for the grace: give up, naming RBAC', [10_000], [part(err(403, 'Forbidden'))], 'denies access needed to fill the cache'],
    ['unauthorized counts as denied', [10_000], [part(err(401, 'Unauthorized'))], 'denies access'],
    [
      'a kind not served for the grace: give up, naming the CRD',
      [10_000],
      [part(err(404, 'NotFound'))],
      'does not serve widgets.example.com: is its CustomResourceDefinition installed?',
    ],
    ['nothing but slowness for the timeout: give up', [119_999, 120_000], [part()], 'timed out after 120s'],
  ])('%s', (_, times, pending, error) => {
    const v = run(times, pending);
    if (error === undefined) expect(v.wait).toBe(true);
    else expect(v).toEqual({ wait: false, error: expect.stringContaining(error) });
  });

  it('restarts the grace when the refusal stops and comes back', () => {
    const denied = [part(err(403, 'Forbidden'))];
    const a = judgeSyncWait(denied, { startedAt: 0 }, 1_000, limits);
    expect(a).toMatchObject({ wait: true, state: { deniedSince: 1_000 } });
    const b = judgeSyncWait([part(err(503, 'ServiceUnavailable'))], (a as { state: SyncWaitState }).state, 8_000, limits);
    expect(b).toMatchObject({ wait: true, state: { deniedSince: undefined } });
    expect(judgeSyncWait(denied, (b as { state: SyncWaitState }).state, 12_000, limits)).toMatchObject({ wait: true, state: { deniedSince: 12_000 } });
  });
});
