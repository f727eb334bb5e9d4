import { createPrivateKey, X509Certificate } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import { createSecureContext } from 'node:tls';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { RuntimeMetrics } from '../metrics/metrics.js';
import type { KeyPair } from './self-signed.js';

/** A POST route: the parsed JSON body in, the JSON reply out. */
export type JsonHandler = (body: unknown) => Promise<unknown> | unknown;

// The API server sends objects of up to 3 MiB (etcd's limit is 1.5 MiB, an update carries two).
const MAX_BODY = 7 * 1024 * 1024;

/**
 * The HTTPS server the API server calls: admission reviews and conversions, POST only. It starts
 * before it has a certificate and refuses handshakes until it gets one (readiness says so); a new
 * certificate (rotation) is taken without a restart and without dropping connections: each open
 * connection moves to it by closing after its next answer.
 */
export class WebhookServer {
  private server?: Server;
  private readonly routes = new Map<string, JsonHandler>();
  private current?: KeyPair;
  /** Which certificate each connection was opened with (its handshake): counted up at each change. */
  private certificate = 0;
  private readonly openedWith = new WeakMap<object, number>();
  port?: number;
  /** Calls received so far (any path, any answer): the idle compaction reads it as work done. */
  calls = 0;

  constructor(
    private readonly addr: { host: string; port: number },
    private readonly log: Logger,
    private readonly metrics?: RuntimeMetrics,
  ) {}

  route(path: string, handler: JsonHandler): void {
    if (this.routes.has(path)) throw new Error(`two webhooks serve ${path}`);
    this.routes.set(path, handler);
  }

  get paths(): string[] {
    return [...this.routes.keys()];
  }

  /** Whether it can complete a handshake. */
  get ready(): boolean {
    return !!this.current && !!this.server?.listening;
  }

  /** Takes a new certificate; throws (keeping the current one) when the pair does not load or match. */
  setCertificate(pair: KeyPair): void {
    if (this.current?.cert === pair.cert && this.current.key === pair.key) return;
    // Checked before anything changes: a broken pair must not replace a working one.
    createSecureContext({ cert: pair.cert, key: pair.key });
    if (!new X509Certificate(pair.cert).checkPrivateKey(createPrivateKey(pair.key))) throw new Error('tls.key does not belong to tls.crt');
    this.server?.setSecureContext({ cert: pair.cert, key: pair.key });
    // A kept-alive connection goes on with the certificate it was opened with. Closing the idle ones
    // here raced the API server's next call on them (a reset; Go does not retry a POST): instead,
    // each answers its next call with Connection: close, and the client reconnects to the new one.
    this.certificate++;
    this.current = pair;
    this.log.info('webhook serving certificate loaded');
  }

  async start(): Promise<void> {
    const server = createServer(this.current ? { cert: this.current.cert, key: this.current.key } : {}, (req, res) => void this.serve(req, res));
    // A webhook call holds a user's request: nothing here should take long.
    server.requestTimeout = 30_000;
    // Longer than the API server's idle timeout (90 s): the client closes an idle connection, never
    // this server, whose close would race a call the client is sending on it.
    server.keepAliveTimeout = 120_000;
    server.on('secureConnection', (socket) => this.openedWith.set(socket, this.certificate));
    // Handshakes that fail before a certificate exists are expected; the rest are worth a line.
    server.on('tlsClientError', (err) => this.log.debug({ err: err.message }, 'webhook TLS handshake failed'));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.addr.port, this.addr.host, () => (server.off('error', reject), resolve()));
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    this.log.info({ port: this.port, paths: this.paths }, 'webhook server listening');
  }

  async stop(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }

  private async serve(req: IncomingMessage, res: ServerResponse) {
    const started = performance.now();
    this.calls++;
    // Opened with an older certificate: this call is its last.
    if ((this.openedWith.get(req.socket) ?? this.certificate) < this.certificate) res.setHeader('Connection', 'close');
    const path = new URL(req.url ?? '/', 'https://localhost').pathname;
    const handler = this.routes.get(path);
    const reply = (code: number, body: unknown) => {
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      res.writeHead(code, { 'content-type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json' });
      res.end(text);
      this.metrics?.webhookRequests.inc({ webhook: path, code: String(code) });
      this.metrics?.webhookLatency.observe({ webhook: path }, (performance.now() - started) / 1000);
    };
    if (!handler) return reply(404, `${path} not found\n`);
    if (req.method !== 'POST') return reply(405, `${req.method} not allowed\n`);
    let size = 0;
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of req) {
        size += (chunk as Buffer).length;
        if (size > MAX_BODY) return reply(413, 'request body too large\n');
        chunks.push(chunk as Buffer);
      }
    } catch {
      return; // the client went away
    }
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return reply(400, 'the body is not JSON\n');
    }
    try {
      reply(200, await handler(body));
    } catch (err) {
      // A body that is not a review is the caller's mistake; anything else is ours.
      if ((err as Error).name === 'ReviewError') return reply(400, `${(err as Error).message}\n`);
      this.log.error({ err, path }, 'webhook handler failed');
      reply(500, `${(err as Error).message}\n`);
    }
  }
}
