import type { Server } from 'node:http';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSolverServer } from './server.js';

/** A GET with an explicit Host header (fetch does not allow setting it). */
const get = (port: number, path: string, host: string, method = 'GET') =>
  new Promise<{ status: number; body: string; cache?: string }>((resolve, reject) => {
    request({ port, path, method, headers: { host } }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, body, cache: res.headers['cache-control'] }));
    })
      .on('error', reject)
      .end();
  });

describe('the HTTP-01 solver', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createSolverServer({ domain: 'Shop.Example.com', token: 'tok-123', key: 'tok-123.thumbprint' }).listen(0);
    await new Promise((r) => server.once('listening', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => server.close());

  it('answers the key authorization for its domain and token, uncached', async () => {
    expect(await get(port, '/.well-known/acme-challenge/tok-123', 'shop.example.com')).toEqual({
      status: 200,
      body: 'tok-123.thumbprint',
      cache: 'no-cache, no-store, must-revalidate',
    });
    expect((await get(port, '/.well-known/acme-challenge/tok-123', 'shop.example.com:80')).status).toBe(200);
  });

  it('answers 404 for another domain, another token, or any other path', async () => {
    expect((await get(port, '/.well-known/acme-challenge/tok-123', 'other.example.com')).status).toBe(404);
    expect((await get(port, '/.well-known/acme-challenge/tok-999', 'shop.example.com')).status).toBe(404);
    expect((await get(port, '/.well-known/other', 'shop.example.com')).status).toBe(404);
    expect((await get(port, '/.well-known/acme-challenge/tok-123/more', 'shop.example.com')).status).toBe(404);
    expect((await get(port, '/.well-known/acme-challenge/', 'shop.example.com')).status).toBe(404);
  });

  it('ignores a query string, answers HEAD, and refuses other methods', async () => {
    expect(await get(port, '/.well-known/acme-challenge/tok-123?x=1', 'shop.example.com')).toMatchObject({ status: 200, body: 'tok-123.thumbprint' });
    expect(await get(port, '/.well-known/acme-challenge/tok-123', 'shop.example.com', 'HEAD')).toMatchObject({ status: 200, body: '' });
    expect((await get(port, '/.well-known/acme-challenge/tok-123', 'shop.example.com', 'POST')).status).toBe(405);
  });

  it('answers probes', async () => {
    expect(await get(port, '/healthz', 'anything')).toMatchObject({ status: 200, body: 'ok' });
  });
});
