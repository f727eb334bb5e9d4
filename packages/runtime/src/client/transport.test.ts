import { describe, expect, it } from 'vitest';
import { ApiError } from './errors.js';
import { turnedAway } from './transport.js';

describe('turnedAway: which answers a request is sent again for', () => {
  const answer = (code: number, retryAfter?: string) => new ApiError('POST', '/api/v1/namespaces/a/configmaps', code, {}, retryAfter);
  it.each([
    [429, undefined, true, 'a 429, with or without Retry-After'],
    [429, '3', true, 'a 429 with Retry-After'],
    [503, '1', true, 'a 503 with Retry-After: drained storage or a shutdown, unprocessed'],
    [503, undefined, false, 'a 503 without Retry-After: maybe a proxy, maybe done'],
    [504, '1', false, 'a 504: the write may have been done after the timeout'],
    [500, '1', false, 'a 500: it may have been done'],
    [409, '1', false, 'a conflict'],
  ])('%i, Retry-After %s: retried %s (%s)', (code, retryAfter, expected, _why) => {
    expect(turnedAway(answer(code, retryAfter))).toBe(expected);
  });
});
