import { KubeConfig } from '@kubernetes/client-node';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Agent, request as httpsRequest, type RequestOptions } from 'node:https';
import type { AddressInfo } from 'node:net';
import { decideFault, DEFAULT_RATES, type Fault, type FaultRates, type RequestInfo } from './schedule.js';

export interface FaultProxyOptions {
  /** The real API server, and the identity to reach it as (an admin's, or a ServiceAccount's). */
  upstream: KubeConfig;
  seed: number;
  rates?: Partial<FaultRates>;
  /** Inject from the start (default true); `faults(false)` stops, `faults(true)` resumes. */
  active?: boolean;
  /**
   * Watches whose path matches deliver every event `ms` late, in order: a cache that lags its own
   * writes, as behind a busy API server, deterministically (faults on or off).
   */
  watchLag?: { path: RegExp; ms: number };
}

export interface FaultProxy {
  /** http://127.0.0.1:<port>: the operator talks to this, unauthenticated; the proxy adds the upstream identity. */
  readonly url: string;
  readonly seed: number;
  /** A kubeconfig pointing at the proxy. */
  kubeConfig(): KubeConfig;
  /** Requests seen, and faults injected, by kind. */
  readonly stats: { requests: number; injected: number; byKind: Record<string, number> };
  /** Starts or stops injecting; requests pass untouched while stopped. */
  faults(on: boolean): void;
  stop(): Promise<void>;
}

const HOP_BY_HOP = new Set(['host', 'connection', 'keep-alive', 'authorization', 'proxy-connection', 'transfer-encoding', 'upgrade']);
/** The upstream answer's status and headers, hop-by-hop ones left out, to the client. */
const passHead = (res: ServerResponse, answer: IncomingMessage) =>
  res.writeHead(answer.statusCode ?? 502, Object.fromEntries(Object.entries(answer.headers).filter(([k]) => !HOP_BY_HOP.has(k))) as Record<string, string>);
const status = (code: number, reason: string, message: string, causes?: { reason: string; message: string }[]) =>
  JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code, ...(causes ? { details: { causes } } : {}) });

/**
 * A real HTTP proxy between an operator and the real kube-apiserver that, on a seeded schedule
 * (schedule.ts), delays, hangs, drops connections (mid-watch too), cuts watch streams, answers 429
 * with Retry-After, 500, 503, 410 and 504 too-large-resourceVersion, and applies a write but fails
 * its answer. Everything else passes through, watches streamed. The same seed gives every request
 * the same fault, however requests interleave.
 */
export async function startFaultProxy(o: FaultProxyOptions): Promise<FaultProxy> {
  const cluster = o.upstream.getCurrentCluster();
  if (!cluster) throw new Error('the upstream kubeconfig has no current cluster');
  const upstream = new URL(cluster.server);
  const tls: RequestOptions = {};
  await o.upstream.applyToHTTPSOptions(tls);
  const identity = Object.fromEntries(Object.entries((tls.headers ?? {}) as Record<string, string>).map(([k, v]) => [k.toLowerCase(), String(v)]));
  const agent = new Agent({ keepAlive: true, ca: tls.ca, cert: tls.cert, key: tls.key, rejectUnauthorized: tls.rejectUnauthorized });
  const rates = { ...DEFAULT_RATES, ...o.rates };
  const seen = new Map<string, number>();
  let active = o.active ?? true;
  const stats = { requests: 0, injected: 0, byKind: {} as Record<string, number> };

  /** Forwards the request; `onAnswer` may take the answer instead of the client. */
  const forward = (req: IncomingMessage, res: ServerResponse, onAnswer?: (up: IncomingMessage) => void) => {
    const headers: Record<string, string | string[]> = { ...identity };
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = v;
    const up = httpsRequest({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers, agent }, (answer) => {
      if (onAnswer) return onAnswer(answer);
      passHead(res, answer);
      answer.pipe(res);
      answer.on('error', () => res.destroy());
    });
    // The API server away: as the client would see it without the proxy, the connection fails.
    up.on('error', () => res.destroy());
    // The client gone before its answer ended (a cut watch, a timeout): the upstream request goes too.
    res.on('close', () => !res.writableFinished && up.destroy());
    req.pipe(up);
    return up;
  };

  const apply = (fault: Fault, req: IncomingMessage, res: ServerResponse) => {
    switch (fault.kind) {
      case 'pass':
        return void forward(req, res);
      case 'delay':
        return void setTimeout(() => forward(req, res), fault.ms);
      case 'hang':
        req.resume();
        return void setTimeout(() => req.socket.destroy(), fault.ms);
      case 'reset':
        return void req.socket.destroy();
      case 'status':
        req.resume();
        res.writeHead(fault.code, {
          'content-type': 'application/json',
          ...(fault.retryAfterSeconds ? { 'retry-after': String(fault.retryAfterSeconds) } : {}),
        });
        return void res.end(
          fault.code === 429
            ? status(429, 'TooManyRequests', 'the proxy throttles this request', undefined)
            : status(fault.code, fault.code === 503 ? 'ServiceUnavailable' : 'InternalError', 'the proxy failed this request'),
        );
      case 'gone':
        // As the watch cache answers a resourceVersion it no longer has: a 200 stream with one ERROR.
        req.resume();
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(
          `${JSON.stringify({ type: 'ERROR', object: JSON.parse(status(410, 'Expired', 'too old resource version (injected by the proxy)')) })}\n`,
        );
      case 'tooLarge':
        req.resume();
        res.writeHead(504, { 'content-type': 'application/json' });
        return void res.end(
          status(504, 'Timeout', 'Too large resource version (injected by the proxy)', [
            { reason: 'ResourceVersionTooLarge', message: 'Too large resource version' },
          ]),
        );
      case 'writeThenFail':
        return void forward(req, res, (answer) => {
          answer.resume();
          answer.on('end', () => {
            if (fault.reset) {
              req.socket.destroy();
              return;
            }
            res.writeHead(500, { 'content-type': 'application/json' });
            res.end(status(500, 'InternalError', 'the proxy lost the answer to a write the API server applied'));
          });
        });
      case 'cutWatch': {
        const up = forward(req, res);
        const timer = setTimeout(() => {
          up.destroy();
          if (fault.reset) req.socket.destroy();
          else res.end();
        }, fault.afterMs);
        res.on('close', () => clearTimeout(timer));
        return;
      }
    }
  };

  /** A watch that passes, each chunk of its stream `ms` late (one delay for all: order is kept). */
  const lagged = (req: IncomingMessage, res: ServerResponse, ms: number) =>
    void forward(req, res, (answer) => {
      passHead(res, answer);
      const timers = new Set<NodeJS.Timeout>();
      const later = (f: () => void) => {
        const t = setTimeout(() => {
          timers.delete(t);
          f();
        }, ms);
        timers.add(t);
      };
      answer.on('data', (chunk: Buffer) => later(() => res.write(chunk)));
      answer.on('end', () => later(() => res.end()));
      answer.on('error', () => res.destroy());
      res.on('close', () => timers.forEach(clearTimeout));
    });

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://proxy');
    const info: RequestInfo = {
      method: req.method ?? 'GET',
      path: url.pathname,
      watch: url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1',
      resumes: !!url.searchParams.get('resourceVersion') && url.searchParams.get('resourceVersion') !== '0',
    };
    stats.requests++;
    const key = `${info.method} ${info.path}${info.watch ? ' watch' : ''}`;
    const n = (seen.get(key) ?? 0) + 1;
    seen.set(key, n);
    // Probes of the API server's health pass: they tell the operator whether the server is there.
    const fault: Fault = active && !info.path.startsWith('/livez') && !info.path.startsWith('/readyz') ? decideFault(o.seed, info, n, rates) : { kind: 'pass' };
    if (fault.kind !== 'pass') {
      stats.injected++;
      stats.byKind[fault.kind] = (stats.byKind[fault.kind] ?? 0) + 1;
    }
    if (fault.kind === 'pass' && info.watch && o.watchLag?.path.test(info.path)) return lagged(req, res, o.watchLag.ms);
    apply(fault, req, res);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    seed: o.seed,
    stats,
    kubeConfig() {
      const kc = new KubeConfig();
      // Plain HTTP on loopback; client-node refuses http:// unless TLS verification is off (there is no TLS to verify).
      kc.loadFromOptions({
        clusters: [{ name: 'proxy', server: url, skipTLSVerify: true }],
        users: [{ name: 'proxy' }],
        contexts: [{ name: 'proxy', cluster: 'proxy', user: 'proxy' }],
        currentContext: 'proxy',
      });
      return kc;
    },
    faults(on) {
      active = on;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      agent.destroy();
    },
  };
}
