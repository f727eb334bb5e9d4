import { generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { classify } from '../controllers/acme/errors.js';
import { AcmeProblemError, AcmeProtocolError, AcmeRateLimitError, AcmeSession, AcmeUnavailableError } from './client.js';

/**
 * A scripted ACME server: enough of RFC 8555 for one newOrder call, answering each POST with the
 * next scripted reply. It checks what the client does on the wire: how many requests, which nonces.
 */
describe('AcmeSession against a scripted ACME server', () => {
  let server: Server;
  let base: string;
  let replies: ((res: ServerResponse) => void)[] = [];
  let log: { method: string; path: string; nonce?: string }[] = [];
  let nonce = 0;
  const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  const problem =
    (status: number, type: string, detail: string, headers: Record<string, string> = {}) =>
    (res: ServerResponse) =>
      res
        .writeHead(status, { 'content-type': 'application/problem+json', 'replay-nonce': `n${++nonce}`, ...headers })
        .end(JSON.stringify({ type: `urn:ietf:params:acme:error:${type}`, detail, status }));
  const order = (res: ServerResponse) =>
    res
      .writeHead(201, { 'content-type': 'application/json', 'replay-nonce': `n${++nonce}`, location: `${base}/order/1` })
      .end(JSON.stringify({ status: 'pending', identifiers: [], authorizations: [], finalize: `${base}/finalize/1` }));

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const protectedHeader = body
          ? (JSON.parse(Buffer.from((JSON.parse(body) as { protected: string }).protected, 'base64url').toString()) as { nonce: string })
          : undefined;
        log.push({ method: req.method!, path: req.url!, nonce: protectedHeader?.nonce });
        if (req.url === '/dir')
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ newNonce: `${base}/nonce`, newAccount: `${base}/acct`, newOrder: `${base}/order` }));
        else if (req.url === '/nonce') res.writeHead(200, { 'replay-nonce': `n${++nonce}` }).end();
        else (replies.shift() ?? problem(500, 'serverInternal', 'unscripted'))(res);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));
  beforeEach(() => {
    replies = [];
    log = [];
  });

  const session = () => new AcmeSession({ directoryUrl: `${base}/dir`, accountKeyPem: key, accountUrl: `${base}/acct/1` });
  const newOrder = (s: AcmeSession) => s.call((c) => c.createOrder({ identifiers: [{ type: 'dns', value: 'a.example' }] }));

  // Found in a heap snapshot of the short-lifetime bench (3,000 certificates: 950 MiB of heap, 9
  // requests' worth per certificate): every request's whole exchange stayed reachable (the timeout
  // signal's timer, registered for its finalization, held the call's trace, which held the answer,
  // whose config held the signal), so the operator's memory grew with every request it ever made.
  it('keeps nothing of a finished request: memory does not grow with the requests made', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const body = JSON.stringify({ suggestedWindow: { start: '2026-01-01T00:00:00Z', end: '2026-01-02T00:00:00Z' }, pad: 'x'.repeat(16_000) });
    const answer = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    const s = session();
    const requests = async (n: number) => {
      for (let i = 0; i < n; i++) {
        replies.push(answer);
        await s.renewalInfo(`${base}/ari`, `c${i}`);
      }
    };
    const settled = async () => {
      await new Promise((r) => setTimeout(r, 50));
      gc();
      gc();
      return process.memoryUsage().heapUsed;
    };
    await requests(50);
    const before = await settled();
    await requests(600);
    const grown = (await settled()) - before;
    // Held, each request would keep its 16 kB answer and the request around it: over 10 MB here.
    expect(grown).toBeLessThan(3 * 2 ** 20);
  });

  // Found by fuzzing (seed 2138585625): acme-client's createAccount and updateAccount call each other
  // while the account has no URL, so a server that answers 200 without a Location drove requests
  // at full speed for ever, in one reconcile.
  it('stops an operation the server makes loop: an account answered 200 without a Location', async () => {
    const existing = (res: ServerResponse) =>
      res.writeHead(200, { 'content-type': 'application/json', 'replay-nonce': `n${++nonce}` }).end(JSON.stringify({ status: 'valid' }));
    replies = Array.from({ length: 50 }, () => existing);
    const s = new AcmeSession({ directoryUrl: `${base}/dir`, accountKeyPem: key });
    const err = await s.call((c) => c.createAccount({ termsOfServiceAgreed: true })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AcmeProtocolError);
    expect((err as Error).message).toMatch(/more than 8 times in one operation/);
    expect(log.filter((r) => r.path === '/acct').length).toBe(8);
  });

  it('turns a 429 into a rate-limit error carrying Retry-After, without sleeping or retrying in the call', async () => {
    replies = [problem(429, 'rateLimited', 'too many new orders recently', { 'retry-after': '120' })];
    const started = Date.now();
    const err = (await newOrder(session()).catch((e: unknown) => e)) as AcmeRateLimitError;
    expect(err).toBeInstanceOf(AcmeRateLimitError);
    expect(err.retryAfterMs).toBe(120_000);
    expect(err.message).toMatch(/^rate limited by the ACME server: too many new orders recently; retrying after \d{4}-/);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(log.filter((l) => l.method === 'POST')).toHaveLength(1);
    // What the Order controller does with it: wait exactly as long as the CA asked.
    expect(classify(err)).toEqual({ kind: 'retry', message: err.message, atLeastMs: 120_000 });
  });

  it("cuts a server's words to 512 characters: a tenant's CA cannot put a megabyte into every status and event", async () => {
    replies = [problem(400, 'malformed', 'x'.repeat(900_000))];
    const err = (await newOrder(session()).catch((e: unknown) => e)) as AcmeProblemError;
    expect(err).toBeInstanceOf(AcmeProblemError);
    expect(err.message).toBe(`${'x'.repeat(512)}… (900000 characters)`);
  });

  it('reads Retry-After given as an HTTP date', async () => {
    replies = [problem(429, 'rateLimited', 'slow down', { 'retry-after': new Date(Date.now() + 30 * 60_000).toUTCString() })];
    const err = (await newOrder(session()).catch((e: unknown) => e)) as AcmeRateLimitError;
    expect(err.retryAfterMs).toBeGreaterThan(29 * 60_000);
    expect(err.retryAfterMs).toBeLessThanOrEqual(30 * 60_000);
  });

  it('treats 5xx and refused connections as an unreachable server: retried, after the backoff retry.ts keeps in status', async () => {
    replies = [problem(503, 'serverInternal', 'maintenance')];
    const err = await newOrder(session()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AcmeUnavailableError);
    expect((err as Error).message).toBe(`ACME server ${base}/dir is unreachable: 503: maintenance`);
    const refused = new AcmeSession({ directoryUrl: 'http://127.0.0.1:1/dir', accountKeyPem: key, accountUrl: 'x' });
    const down = await newOrder(refused).catch((e: unknown) => e);
    expect(down).toBeInstanceOf(AcmeUnavailableError);
    expect((down as Error).message).toMatch(/ECONNREFUSED/);
    expect(classify(down)).toEqual({ kind: 'retry', message: (down as Error).message });
  });

  it("reports a refusal as final, with the CA's words", async () => {
    replies = [problem(400, 'rejectedIdentifier', 'a.example is blocked by policy')];
    const err = await newOrder(session()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AcmeProblemError);
    expect(classify(err)).toEqual({ kind: 'final', message: 'a.example is blocked by policy (urn:ietf:params:acme:error:rejectedIdentifier)' });
    replies = [problem(400, 'accountDoesNotExist', 'no account for kid')];
    expect(classify(await newOrder(session()).catch((e: unknown) => e)).kind).toBe('account-lost');
  });

  it('signs each request with the nonce of the previous answer, fetching one only when it has none', async () => {
    const s = session();
    replies = [order, order, order];
    for (let i = 0; i < 3; i++) await newOrder(s);
    expect(log.filter((l) => l.method === 'HEAD')).toHaveLength(1);
    const posts = log.filter((l) => l.method === 'POST');
    expect(new Set(posts.map((p) => p.nonce)).size).toBe(3);
    expect(s.requests).toBe(log.length);
  });

  it('retries a badNonce once with the fresh nonce, and never reuses that nonce', async () => {
    const s = session();
    replies = [problem(400, 'badNonce', 'stale nonce'), order, order];
    await newOrder(s);
    await newOrder(s);
    const posts = log.filter((l) => l.method === 'POST').map((p) => p.nonce);
    expect(posts).toHaveLength(3);
    expect(new Set(posts).size).toBe(3);
  });
});
