import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfCheck } from './self-check.js';

describe('selfCheck', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((req, res) => {
      const answers: Record<string, () => void> = {
        '/.well-known/acme-challenge/good': () => res.end('good.thumb'),
        '/.well-known/acme-challenge/wrong': () => res.end('secret-that-must-not-leak'),
        '/.well-known/acme-challenge/moved': () => res.writeHead(302, { location: '/.well-known/acme-challenge/good' }).end(),
        '/.well-known/acme-challenge/loop': () => res.writeHead(301, { location: '/.well-known/acme-challenge/loop' }).end(),
      };
      (answers[req.url ?? ''] ?? (() => res.writeHead(404).end('nope')))();
    });
    await new Promise<void>((r) => server.listen(0, r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  it('passes when the route answers the key authorization', async () => {
    expect(await selfCheck('localhost', 'good', 'good.thumb', { port })).toBeUndefined();
  });

  it('follows redirects, as the CA does', async () => {
    expect(await selfCheck('localhost', 'moved', 'good.thumb', { port })).toBeUndefined();
  });

  it('says why it failed, without echoing the body', async () => {
    expect(await selfCheck('localhost', 'missing', 'k', { port })).toBe(
      `GET http://localhost:${port}/.well-known/acme-challenge/missing: expected status 200, got 404`,
    );
    const wrong = await selfCheck('localhost', 'wrong', 'wrong.thumb', { port });
    expect(wrong).toBe(`GET http://localhost:${port}/.well-known/acme-challenge/wrong: the response is not the key authorization for token wrong`);
    expect(await selfCheck('localhost', 'loop', 'k', { port })).toMatch(/too many redirects/);
  });

  it('reports a refused connection and an unresolvable name', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, r));
    const dead = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    expect(await selfCheck('127.0.0.1', 'good', 'k', { port: dead })).toMatch(/ECONNREFUSED/);
    expect(await selfCheck('name.invalid', 'good', 'k', { port })).toMatch(/ENOTFOUND|EAI_AGAIN/);
  });
});
