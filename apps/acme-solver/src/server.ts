import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export interface SolverOptions {
  domain: string;
  token: string;
  key: string;
}

const CHALLENGE_PREFIX = '/.well-known/acme-challenge/';

/** The host a request was sent to, without its port (IPv6 brackets kept off). */
const hostOf = (header: string | undefined) =>
  (header ?? '')
    .toLowerCase()
    .replace(/:\d+$/, '')
    .replace(/^\[(.*)\]$/, '$1');

function reply(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/**
 * The HTTP-01 responder: `/.well-known/acme-challenge/<token>` for its domain answers the key
 * authorization; `/` and `/healthz` answer 200 (probes); anything else is a 404, so a misrouted
 * request can never be mistaken for a pass.
 *
 * Plain node:http, not express: a solver pod runs under a 64Mi limit, and express (with its
 * dependency tree loaded) costs about 20 MB of the ~60 MB a Node process then holds.
 */
export function createSolverServer(o: SolverOptions): Server {
  const domain = o.domain.toLowerCase();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (req.method !== 'GET' && req.method !== 'HEAD') return reply(res, 405, 'method not allowed', { Allow: 'GET, HEAD' });
    if (path === '/' || path === '/healthz') return reply(res, 200, 'ok');
    if (path.startsWith(CHALLENGE_PREFIX) && hostOf(req.headers.host) === domain && path.slice(CHALLENGE_PREFIX.length) === o.token) {
      return reply(res, 200, o.key, { 'Cache-Control': 'no-cache, no-store, must-revalidate' });
    }
    reply(res, 404, 'not found');
  });
  // A slow client cannot hold a connection open for long (the CA's validator sends one small GET).
  server.headersTimeout = 32_000;
  server.requestTimeout = 60_000;
  return server;
}
