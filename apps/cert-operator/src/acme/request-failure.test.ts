import { describe, expect, it } from 'vitest';
import { requestFailure } from './request-failure.js';

const limits = { timeoutMs: 30_000, maxBytes: 1 << 20, maxRedirects: 2 };
const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
const quiet = { timedOut: false, bytes: 0, redirects: 0 };
/** What acme-client throws for any error without a response, hiding the cause. */
const masked = { name: 'TypeError', message: "Cannot read properties of undefined (reading 'config')" };

describe('requestFailure', () => {
  it.each([
    {
      name: 'our whole-request timeout (the abort also errors the socket)',
      err: masked,
      socket: Object.assign(new Error('canceled'), { code: 'ERR_CANCELED' }),
      seen: { ...quiet, timedOut: true },
      want: ['unavailable', 'no complete answer within 30 s'],
    },
    {
      name: 'an endless answer, masked by acme-client',
      err: masked,
      seen: { ...quiet, bytes: (1 << 20) + 1 },
      want: ['unavailable', 'the answer is larger than 1 MiB'],
    },
    {
      name: 'an answer past the size limit, seen by the stream only',
      err: masked,
      socket: Object.assign(new Error('maxContentLength size of 1048576 exceeded'), { code: 'ERR_BAD_RESPONSE' }),
      want: ['unavailable', 'the answer is larger than 1 MiB'],
    },
    { name: 'redirects in circles, masked by acme-client', err: masked, seen: { ...quiet, redirects: 2 }, want: ['unavailable', 'more than 2 redirects'] },
    {
      name: 'two redirects, then a reset: the reset',
      err: { code: 'ECONNRESET', message: 'socket hang up' },
      socket: reset,
      seen: { ...quiet, redirects: 1 },
      want: ['unavailable', 'ECONNRESET read ECONNRESET'],
    },
    {
      name: "axios's own timeout",
      err: { code: 'ECONNABORTED', message: 'timeout of 30000ms exceeded' },
      want: ['unavailable', 'no complete answer within 30 s'],
    },
    {
      name: 'an answer past the size limit',
      err: { code: 'ERR_BAD_RESPONSE', message: 'maxContentLength size of 1048576 exceeded' },
      want: ['unavailable', 'the answer is larger than 1 MiB'],
    },
    {
      name: 'redirects in circles',
      err: { code: 'ERR_FR_TOO_MANY_REDIRECTS', message: 'Maximum number of redirects exceeded' },
      want: ['unavailable', 'more than 2 redirects'],
    },
    {
      name: 'a directory naming a URL that is not one',
      err: { code: 'ERR_INVALID_URL', message: 'Invalid URL' },
      want: ['protocol', 'it named a URL that is not one (Invalid URL)'],
    },
    { name: 'a reset connection', err: { message: 'socket hang up', code: 'ECONNRESET' }, socket: reset, want: ['unavailable', 'ECONNRESET read ECONNRESET'] },
    {
      name: 'a refused connection, without a socket error recorded',
      err: { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:1' },
      want: ['unavailable', 'ECONNREFUSED connect ECONNREFUSED 127.0.0.1:1'],
    },
    { name: 'nothing said at all', err: {}, want: ['unavailable', 'the connection failed without a response'] },
  ])('$name', ({ err, socket, seen, want }) => {
    const f = requestFailure(err, socket, seen ?? quiet, limits);
    expect([f.kind, f.cause]).toEqual(want);
  });
});
