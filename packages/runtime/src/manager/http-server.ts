import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';

/** `:8080`, `0.0.0.0:8080`, `127.0.0.1:0` (any free port); `0` or empty disables the server. */
export function parseBindAddress(addr: string | undefined): { host: string; port: number } | undefined {
  if (!addr || addr === '0') return undefined;
  const i = addr.lastIndexOf(':');
  const host = i > 0 ? addr.slice(0, i).replace(/^\[|\]$/g, '') : '0.0.0.0';
  const port = Number(i >= 0 ? addr.slice(i + 1) : addr);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid bind address "${addr}": expected [host]:port`);
  return { host, port };
}

export interface RunningServer {
  server: Server;
  /** The port actually bound (useful with port 0). */
  port: number;
  close(): Promise<void>;
}

/** What a route answers: a text, or a stream (a heap snapshot is hundreds of megabytes). */
export interface Reply {
  status: number;
  contentType: string;
  body: string | Readable;
  /** Extra response headers (a download's file name). */
  headers?: Record<string, string>;
}
/** A GET route: the request's URL (with its query) in, the reply out. */
export type Route = (url: URL) => Promise<Reply> | Reply;

export interface ListenOptions {
  /** Serve HTTPS with this certificate. */
  tls?: { cert: string; key: string };
  /** Asked before every route: undefined lets the request through, a reply refuses it. */
  authorize?: (req: IncomingMessage, path: string) => Promise<Reply | undefined>;
}

/**
 * A small HTTP server for the manager's read-only endpoints (/metrics, /healthz, /readyz): GET and
 * HEAD on exact paths, 404 elsewhere, 405 for other methods. node:http rather than a framework:
 * three GET routes do not need one, and express cost every operator 12 MiB of idle memory
 * (measured on Node 24: 76.9 -> 64.9 MiB RSS; bundle 1.22 -> 0.45 MB).
 */
export async function listen(routes: Record<string, Route>, addr: { host: string; port: number }, options: ListenOptions = {}): Promise<RunningServer> {
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const route = routes[url.pathname];
    const reply = (r: Reply) => {
      if (typeof r.body !== 'string') {
        res.writeHead(r.status, { 'content-type': r.contentType, ...r.headers });
        if (req.method === 'HEAD') return void (r.body.destroy(), res.end());
        const body = r.body;
        // A caller that goes away mid-download must not leave the stream (and what it holds) open.
        res.once('close', () => body.destroy());
        body.on('error', () => res.destroy()).pipe(res);
        return;
      }
      res.writeHead(r.status, { 'content-type': r.contentType, 'content-length': Buffer.byteLength(r.body), ...r.headers });
      res.end(req.method === 'HEAD' ? undefined : r.body);
    };
    if (!route) return reply({ status: 404, contentType: 'text/plain; charset=utf-8', body: `${url.pathname} not found\n` });
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      return reply({ status: 405, contentType: 'text/plain; charset=utf-8', body: `${req.method} not allowed\n` });
    }
    Promise.resolve()
      .then(() => options.authorize?.(req, url.pathname))
      .then((refused) => refused ?? route(url))
      .then(reply, (err: Error) => reply({ status: 500, contentType: 'text/plain; charset=utf-8', body: `${err.message}\n` }));
  };
  const server: Server = options.tls ? createHttpsServer({ cert: options.tls.cert, key: options.tls.key }, handler) : createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(addr.port, addr.host, () => (server.off('error', reject), resolve()));
  });
  // Scrapes and probes are short; don't let a slow client hold the process at shutdown.
  server.keepAliveTimeout = 5_000;
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
