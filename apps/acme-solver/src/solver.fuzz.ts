import { fuzzTargets } from '@opkit/testing/fuzz';
import fc from 'fast-check';
import { request } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { createSolverServer } from './server.js';

// A solver pod is reachable by anything that reaches its Service or its address: any bytes get an
// answer or a closed connection, the server stays up, and only the CA's exact request (GET or
// HEAD, the token's path, the domain as host) is answered with the key authorization.

const DOMAIN = 'shop.example.com';
const TOKEN = 'tok-3v1N';
const KEY = 'tok-3v1N.thumbprint';
let port: Promise<number> | undefined;
const solver = () =>
  (port ??= new Promise((resolve) => {
    const s = createSolverServer({ domain: DOMAIN, token: TOKEN, key: KEY });
    s.listen(0, '127.0.0.1', () => {
      s.unref();
      resolve((s.address() as AddressInfo).port);
    });
  }));

/** Sends raw bytes and waits for the answer (or the close), at most a second. */
const raw = (p: number, bytes: Buffer) =>
  new Promise<void>((resolve) => {
    const sock = connect(p, '127.0.0.1', () => sock.end(bytes));
    sock.setTimeout(1_000, () => sock.destroy());
    sock.on('data', () => undefined);
    sock.on('error', () => resolve());
    sock.on('close', () => resolve());
  });

/** A well-formed request; its status and body. */
const get = (p: number, method: string, path: string, host: string) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: p, method, path, headers: { host } }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });

const line = fc.tuple(
  fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'OPTIONS', 'G\u00e9T', ''),
  fc.oneof(
    fc.constant(`/.well-known/acme-challenge/${TOKEN}`),
    fc.string({ maxLength: 40 }).map((s) => `/${s}`),
    fc.string({ maxLength: 20 }),
  ),
  fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/9', ''),
);
const headers = fc.array(
  fc.tuple(
    fc.constantFrom('Host', 'Content-Length', 'Transfer-Encoding', 'X'),
    fc.oneof(fc.constantFrom(DOMAIN, `${DOMAIN}:80`, 'SHOP.EXAMPLE.COM', '[::1]:80', 'chunked', '-1', '99999999999'), fc.string({ maxLength: 20 })),
  ),
  { maxLength: 4 },
);
const rawRequest = fc.oneof(
  fc
    .tuple(line, headers, fc.string({ maxLength: 40 }))
    .map(([[m, p, v], hs, b]) => Buffer.from(`${m} ${p} ${v}\r\n${hs.map(([k, x]) => `${k}: ${x}`).join('\r\n')}\r\n\r\n${b}`, 'latin1')),
  fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
);

export const targets = fuzzTargets(
  {
    name: 'the solver: any bytes get an answer or a close, and it keeps serving',
    arbitrary: rawRequest,
    run: async (bytes: Buffer) => {
      const p = await solver();
      await raw(p, bytes);
      const probe = await get(p, 'GET', '/healthz', 'probe');
      if (probe.status !== 200) throw new Error(`the solver answers its probe ${probe.status} after that request`);
    },
  },
  {
    name: "the solver: the key authorization for the CA's exact request only",
    arbitrary: fc.tuple(
      fc.constantFrom('GET', 'HEAD', 'POST', 'DELETE'),
      fc.oneof(
        fc.constant(`/.well-known/acme-challenge/${TOKEN}`),
        fc.constant(`/.well-known/acme-challenge/${TOKEN}?x=1`),
        fc.constant(`/.well-known/acme-challenge/${TOKEN}/`),
        fc.string({ maxLength: 30 }).map((s) => `/.well-known/acme-challenge/${encodeURIComponent(s)}`),
      ),
      fc.constantFrom(DOMAIN, `${DOMAIN}:8089`, 'SHOP.example.com', 'other.example.com', `${DOMAIN}.evil.com`, ''),
    ),
    run: async ([method, path, host]: [string, string, string]) => {
      const r = await get(await solver(), method, path, host);
      const exact =
        (method === 'GET' || method === 'HEAD') &&
        path.split('?')[0] === `/.well-known/acme-challenge/${TOKEN}` &&
        host.replace(/:\d+$/, '').toLowerCase() === DOMAIN;
      const gotKey = r.status === 200 && (method === 'HEAD' || r.body === KEY);
      if (exact !== gotKey)
        throw new Error(`${method} ${path} (host ${host}) answered ${r.status} ${JSON.stringify(r.body)}: ${exact ? 'the CA would fail' : 'the key leaked'}`);
    },
  },
);
