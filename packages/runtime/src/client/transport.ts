import type { Tracer } from '../tracing/tracer.js';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions } from 'node:https';
import { systemClock, type Clock } from '../clock/clock.js';
import { ApiError, ConnectionError, type Status } from './errors.js';
import type { ClusterAccess } from './kubeconfig.js';
import { TokenBucket } from './rate-limiter.js';
import { parseWarnings } from './warnings.js';
import { proxyFor, TunnelingHttpAgent, TunnelingHttpsAgent } from './proxy.js';

export interface TransportOptions {
  /** Client-side limit (0 or less = off, the default). */
  qps?: number;
  burst?: number;
  userAgent?: string;
  /**
   * Bound on a non-watch request: no byte for this long ends it. Default 30 s, so a request to a
   * hung API server fails instead of holding a worker.
   */
  requestTimeoutMs?: number;
  /**
   * Bound on opening a watch: connected, authenticated and answered. Default 15 s (a SIGSTOPped API
   * server still completes TCP handshakes from its backlog; only an answer proves it is alive).
   */
  streamOpenTimeoutMs?: number;
  /**
   * How often an answer that says "not done, come back" (a 429, or a 503 with Retry-After) is
   * retried after its Retry-After before the error surfaces. Default 5.
   */
  maxThrottleRetries?: number;
  /** Observes every completed request (metrics). */
  onResponse?: (method: string, code: number, seconds: number) => void;
  /** The API server's warnings on an answer (`Warning: 299 - "…"`), parsed (client/warnings.ts). */
  onWarning?: (warnings: string[], spec: RequestSpec) => void;
  clock?: Clock;
  /**
   * Traces requests made inside a traced reconcile as its children (a client span each, and the
   * W3C traceparent header, which an API server with tracing on continues).
   */
  tracer?: Tracer;
}

export interface RequestSpec {
  method: string;
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  accept?: string;
  signal?: AbortSignal;
  /** Extra headers, e.g. impersonation. */
  headers?: Record<string, string | string[]>;
}

interface AuthSnapshot {
  agent: HttpAgent;
  headers: Record<string, string>;
  at: number;
  tlsKey: string;
}

/**
 * TCP keep-alive starts probing a connection after this much silence; libuv then probes every
 * second, ten times, so a peer that stopped answering (a dropped NAT entry, a vanished load
 * balancer, a partition) costs the connection 25 s after it went quiet, watches included.
 */
const TCP_KEEPALIVE_IDLE_MS = 15_000;

// Tokens from files (in-cluster, bound ServiceAccount tokens) and exec plugins rotate; re-ask
// the kubeconfig for credentials this often instead of on every request (it reads files each time).
const AUTH_REFRESH_MS = 30_000;

/**
 * HTTP to the API server with a kubeconfig's credentials (files, in-cluster, exec plugins),
 * with one keep-alive agent, TCP keepalive on every socket, 429 handling and
 * an optional token bucket.
 */
export class Transport {
  readonly server: string;
  private auth?: AuthSnapshot;
  private authPending?: Promise<AuthSnapshot>;
  private readonly bucket: TokenBucket;
  private readonly isHttps: boolean;
  /** host:port, for trace spans. */
  private readonly serverHost: string;

  constructor(
    readonly kubeConfig: ClusterAccess,
    private readonly options: TransportOptions = {},
  ) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster: set a current-context or pass --kubeconfig');
    this.server = cluster.server.replace(/\/+$/, '');
    this.isHttps = this.server.startsWith('https:');
    this.serverHost = new URL(this.server).host;
    this.proxy = proxyFor(new URL(this.server), cluster.proxyUrl);
    this.clock = options.clock ?? systemClock;
    this.bucket = new TokenBucket(options.qps ?? 0, options.burst ?? 0, this.clock);
  }
  private readonly clock: Clock;
  /** The HTTP proxy the API server is reached through (kubeconfig proxy-url, or HTTPS_PROXY/NO_PROXY). */
  readonly proxy?: URL;

  private async authSnapshot(force = false): Promise<AuthSnapshot> {
    if (!force && this.auth && this.clock.monotonic() - this.auth.at < AUTH_REFRESH_MS) return this.auth;
    this.authPending ??= (async () => {
      if (force) this.kubeConfig.refreshCredentials?.();
      const opts: RequestOptions = {};
      await this.kubeConfig.applyToHTTPSOptions(opts);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(opts.headers ?? {})) if (v !== undefined) headers[k] = String(v);
      if (opts.auth) headers.Authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
      // The agent holds the TLS material; keep it (and its pooled sockets) unless that changed.
      const tlsKey = [opts.ca, opts.cert, opts.key, opts.rejectUnauthorized, opts.servername].map(String).join('|');
      let agent = this.auth?.agent;
      if (!agent || this.auth?.tlsKey !== tlsKey) {
        agent?.destroy();
        const common = { keepAlive: true, keepAliveMsecs: TCP_KEEPALIVE_IDLE_MS, scheduling: 'lifo' as const };
        const tls = { ...common, ca: opts.ca, cert: opts.cert, key: opts.key, rejectUnauthorized: opts.rejectUnauthorized, servername: opts.servername };
        agent = this.proxy
          ? this.isHttps
            ? new TunnelingHttpsAgent(this.proxy, tls)
            : new TunnelingHttpAgent(this.proxy, common)
          : this.isHttps
            ? new HttpsAgent(tls)
            : new HttpAgent(common);
      }
      return { agent, headers, at: this.clock.monotonic(), tlsKey };
    })().finally(() => (this.authPending = undefined));
    this.auth = await this.authPending;
    return this.auth;
  }

  private url(spec: RequestSpec): URL {
    const url = new URL(this.server + spec.path);
    for (const [k, v] of Object.entries(spec.query ?? {})) if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
    return url;
  }

  /** Sends a request and returns the raw response; the caller owns the body stream. */
  private async send(spec: RequestSpec, timeoutMs: number | undefined, forceAuth = false, answerTimeoutMs?: number): Promise<IncomingMessage> {
    spec.signal?.throwIfAborted();
    await this.bucket.take();
    const auth = await this.authSnapshot(forceAuth);
    const url = this.url(spec);
    const payload = spec.body === undefined ? undefined : typeof spec.body === 'string' ? spec.body : JSON.stringify(spec.body);
    const headers: Record<string, string | string[]> = {
      ...auth.headers,
      accept: spec.accept ?? 'application/json',
      'user-agent': this.options.userAgent ?? 'opkit',
      ...spec.headers,
    };
    if (payload !== undefined) {
      headers['content-type'] = spec.contentType ?? 'application/json';
      headers['content-length'] = String(Buffer.byteLength(payload));
    }
    return new Promise((resolve, reject) => {
      const req = (this.isHttps ? httpsRequest : httpRequest)(url, { method: spec.method, headers, agent: auth.agent, signal: spec.signal }, (res) => {
        clearTimeout(answerTimer);
        resolve(res);
      });
      // An answer must start within this time (a watch then streams for minutes).
      const answerTimer = answerTimeoutMs
        ? setTimeout(() => req.destroy(new Error(`no answer within ${answerTimeoutMs / 1000}s`)), answerTimeoutMs)
        : undefined;
      req.on('socket', (s) => s.setKeepAlive(true, TCP_KEEPALIVE_IDLE_MS));
      if (timeoutMs) req.setTimeout(timeoutMs, () => req.destroy(new Error(`no response within ${timeoutMs / 1000}s`)));
      req.on('error', (err) => {
        clearTimeout(answerTimer);
        reject(spec.signal?.aborted ? (spec.signal.reason ?? err) : new ConnectionError(spec.method, url.pathname, err));
      });
      req.end(payload);
    });
  }

  private async readBody(res: IncomingMessage): Promise<string> {
    res.setEncoding('utf8');
    let data = '';
    for await (const chunk of res) data += chunk;
    return data;
  }

  private async errorFrom(spec: RequestSpec, res: IncomingMessage): Promise<ApiError> {
    const text = await this.readBody(res).catch(() => '');
    let body: Status | string = text;
    try {
      body = JSON.parse(text) as Status;
    } catch {
      /* not JSON: keep the text */
    }
    const retryAfter = res.headers['retry-after'];
    return new ApiError(spec.method, spec.path, res.statusCode ?? 0, body, Array.isArray(retryAfter) ? retryAfter[0] : retryAfter);
  }

  /** A request whose JSON answer is returned; error statuses throw ApiError; requests turned away unprocessed are retried. */
  async request<T>(spec: RequestSpec): Promise<T> {
    const tracer = this.options.tracer;
    if (!tracer?.current()) return this.requestOnce<T>(spec);
    const span = tracer.startSpan(spec.method, {
      kind: 'client',
      attributes: { 'http.request.method': spec.method, 'url.path': spec.path, 'server.address': this.serverHost },
    });
    try {
      const out = await this.requestOnce<T>({ ...spec, headers: { ...spec.headers, traceparent: span.traceparent() } }, (code) =>
        span.setAttribute('http.response.status_code', code),
      );
      return out;
    } catch (err) {
      span.fail(err);
      throw err;
    } finally {
      span.end();
    }
  }

  private async requestOnce<T>(spec: RequestSpec, onStatus?: (code: number) => void): Promise<T> {
    const maxRetries = this.options.maxThrottleRetries ?? 5;
    for (let attempt = 0; ; attempt++) {
      const started = process.hrtime.bigint();
      const timeout = this.options.requestTimeoutMs ?? 30_000;
      const res = await this.send(spec, timeout, attempt > 0 && this.lastWasUnauthorized, timeout);
      const code = res.statusCode ?? 0;
      this.options.onResponse?.(spec.method, code, Number(process.hrtime.bigint() - started) / 1e9);
      this.warned(res, spec);
      onStatus?.(code);
      if (code >= 200 && code < 300) {
        const text = await this.readBody(res);
        this.lastWasUnauthorized = false;
        return (text ? JSON.parse(text) : undefined) as T;
      }
      const err = await this.errorFrom(spec, res);
      // A 401 may mean a rotated token: refresh credentials once before giving up.
      if (code === 401 && attempt === 0) {
        this.lastWasUnauthorized = true;
        continue;
      }
      if (turnedAway(err) && attempt < maxRetries) {
        // Ends early when the request's signal aborts (a lost lease, a reconcile timeout): send() then throws.
        await this.clock.sleep(Math.min(err.retryAfterSeconds ?? 1, 10) * 1000, spec.signal);
        continue;
      }
      throw err;
    }
  }
  private lastWasUnauthorized = false;

  private warned(res: IncomingMessage, spec: RequestSpec) {
    if (!this.options.onWarning || res.headers.warning === undefined) return;
    const warnings = parseWarnings(res.headers.warning);
    if (warnings.length) this.options.onWarning(warnings, spec);
  }

  /** Opens a streaming request (a watch). Resolves once the server answered 200. */
  async stream(spec: RequestSpec): Promise<IncomingMessage> {
    const res = await this.send(spec, undefined, false, this.options.streamOpenTimeoutMs ?? 15_000);
    this.warned(res, spec);
    if (res.statusCode === 200) return res;
    throw await this.errorFrom(spec, res);
  }

  /**
   * A bare GET whose only question is "does the API server answer at all?": any status is an
   * answer. Rejects when no answer comes within `timeoutMs`.
   */
  async probe(path: string, timeoutMs: number): Promise<number> {
    const res = await this.send({ method: 'GET', path }, timeoutMs, false, timeoutMs);
    res.resume();
    return res.statusCode ?? 0;
  }

  /**
   * Drops every connection, idle or busy, watches included: after the API server stopped
   * answering, a pooled socket may be half-open for good, and only a new connection tells.
   */
  resetConnections(): void {
    this.auth?.agent.destroy();
    this.auth = undefined;
  }

  /** Closes pooled connections. */
  close(): void {
    this.auth?.agent.destroy();
    this.auth = undefined;
  }
}

/**
 * True for an answer by which the API server says it did not process the request and asks for it
 * again later, so that even a create may be sent again: a 429 (API Priority and Fairness, a
 * client's own limit), or a 503 with Retry-After (its requests drained for a shutdown, or for a
 * CRD whose spec changed: that kind's old storage answers "apiserver is shutting down" meanwhile).
 * client-go retries any 5xx carrying Retry-After; a 504 or 500 may come after the write was done,
 * so only the 503 is taken as unprocessed here.
 */
export function turnedAway(err: ApiError): boolean {
  return err.status === 429 || (err.status === 503 && err.retryAfterSeconds !== undefined);
}
