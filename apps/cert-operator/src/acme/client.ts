import * as acme from 'acme-client';
import { AsyncLocalStorage } from 'node:async_hooks';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Socket } from 'node:net';
import { requestFailure, type Observed } from './request-failure.js';

// acme-client retries 429s and 5xx itself, sleeping for Retry-After inside the call: a reconcile
// would hang for as long as the CA asks (minutes, hours). We want the wait persisted and shown on
// the resource instead, so in-process retries are off and rate limits surface as errors.
(acme.axios.defaults as unknown as { acmeSettings: { retryMaxAttempts: number } }).acmeSettings.retryMaxAttempts = 0;

/** The ACME server asked us to slow down (429, or a rateLimited problem). */
export class AcmeRateLimitError extends Error {
  constructor(
    readonly retryAfterMs: number,
    detail: string,
  ) {
    super(`rate limited by the ACME server: ${detail}; retrying after ${new Date(Date.now() + retryAfterMs).toISOString()}`);
    this.name = 'AcmeRateLimitError';
  }
}

/** The ACME server could not be reached (refused, reset, timed out, 5xx). Retried with backoff. */
export class AcmeUnavailableError extends Error {
  constructor(
    readonly server: string,
    cause: string,
    /** The 5xx status it answered, when it answered at all. */
    readonly status?: number,
  ) {
    super(`ACME server ${server} is unreachable: ${cause}`);
    this.name = 'AcmeUnavailableError';
  }
}

/** The ACME server answered something that is not ACME (a body that does not parse, a field missing or of the wrong kind). */
export class AcmeProtocolError extends Error {
  constructor(
    readonly server: string,
    cause: string,
  ) {
    super(`the ACME server ${server} answered something that is not ACME: ${cause}`);
    this.name = 'AcmeProtocolError';
  }
}

/** An ACME problem document (RFC 8555 §6.7) answered with a 4xx: final unless noted. */
export class AcmeProblemError extends Error {
  constructor(
    readonly type: string,
    readonly status: number,
    detail: string,
  ) {
    super(detail);
    this.name = 'AcmeProblemError';
  }
  /** The account or object is gone (a CA restarted, an expired order): start over. */
  get notFound(): boolean {
    return this.type.endsWith(':accountDoesNotExist') || this.status === 404 || /no (order|authorization|account) for id|not found/i.test(this.message);
  }
  get accountGone(): boolean {
    return this.type.endsWith(':accountDoesNotExist') || /account .*(does not exist|not found)/i.test(this.message);
  }
}

/** The longest one request to an ACME server may take, start to end. */
const REQUEST_TIMEOUT_MS = 30_000;
/** The longest a renewal-info request may take (acme/renewal-info.ts: it is asked again later). */
const RENEWAL_INFO_TIMEOUT_MS = 10_000;
/** The largest answer read from an ACME server: a certificate chain is a few KiB. */
const MAX_RESPONSE_BYTES = 1 << 20;
const MAX_REDIRECTS = 2;

export interface AcmeServerOptions {
  directoryUrl: string;
  accountKeyPem: string;
  accountUrl?: string;
  /** PEM bundle to trust for the server's TLS (Issuer spec.acme.caBundle). */
  caPem?: string;
  skipTLSVerify?: boolean;
  externalAccountBinding?: { kid: string; hmacKey: string };
  /** Told of every request to the server (metrics). */
  observe?: RequestObserver;
}

export type RequestObserver = (r: { method: string; url: string; status: number | 'error'; seconds: number }) => void;

interface Response {
  status: number;
  headers: Record<string, string>;
  data: { type?: string; detail?: string } | unknown;
}

/**
 * What one `call` saw on the wire, kept apart from concurrent calls on the same session. Only what
 * its errors need of the last answer, copied: the answer itself holds the request, its socket and
 * its timeout signal, and timers, sockets and promises made during the call keep this trace.
 */
interface LastAnswer {
  status: number;
  retryAfter?: string;
  problem: { type?: string; detail?: string };
}

interface CallTrace {
  lastAnswer?: LastAnswer;
  socketError?: Error;
  /** Requests so far in this operation, by method and URL, and in all: a server's answers can make acme-client loop. */
  sent: Map<string, number>;
  total: number;
}

/**
 * One operation (createAccount, getAuthorizations, …) sends each request a couple of times at most
 * (a badNonce retry), and a few hundred in all (one per authorization of an order of 256 names).
 * More is a loop a server's answers drive: an account answered 200 without a Location made
 * acme-client's createAccount and updateAccount call each other for ever, at full speed (found by
 * fuzzing).
 */
const MAX_SAME_REQUEST = 8;
const MAX_REQUESTS_PER_OPERATION = 600;

/** The longest text from a server kept in a message. */
const MAX_DETAIL = 512;
const boundedText = (s: string) => (s.length > MAX_DETAIL ? `${s.slice(0, MAX_DETAIL)}… (${s.length} characters)` : s);

/** A Retry-After header (seconds, or an HTTP date, read against `nowMs`) as a wait in ms. */
export const parseRetryAfter = (value: string | undefined, nowMs: number): number | undefined => {
  if (!value) return undefined;
  const secs = Number(value);
  if (Number.isFinite(secs)) return Math.max(0, secs * 1000);
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, at - nowMs) : undefined;
};

/** What `call` keeps of an answer: its status, Retry-After, and a problem document's type and detail, bounded. */
function lastAnswer(resp: Response): LastAnswer {
  const data = resp.data as { type?: unknown; detail?: unknown } | undefined;
  const text = (v: unknown) => (typeof v === 'string' ? boundedText(v) : undefined);
  const problem = data && typeof data === 'object' ? { type: text(data.type), detail: text(data.detail) } : {};
  return { status: resp.status, retryAfter: text(resp.headers['retry-after']), problem };
}

/** What the directory offers beyond RFC 8555's resources. */
export interface DirectoryFeatures {
  /** Where accounts are made (RFC 8555 §7.3): their URLs are on this resource's origin. */
  newAccount?: string;
  /** The renewalInfo resource (RFC 9773), when the CA offers ARI. */
  renewalInfo?: string;
  /** The profiles the CA offers, by name, with their descriptions (draft-aaron-acme-profiles). */
  profiles?: Record<string, string>;
}

/** The CA's answer for one certificate's renewal info: the body as sent, decoded by acme/renewal-info.ts. */
export interface RenewalInfoAnswer {
  body: unknown;
  retryAfter?: string;
}

/**
 * acme-client loses the cause of a failed connection (its axios interceptor dereferences the
 * missing response), so the agents record socket errors on the call that made them.
 */
function recordingAgents(trace: AsyncLocalStorage<CallTrace>, tls: { ca?: string; rejectUnauthorized: boolean }, recent: { error?: Error }) {
  // A kept-alive socket outlives the call that opened it: its later errors go to the session too.
  const record = (socket: Socket) => {
    const t = trace.getStore();
    socket.once('error', (err) => {
      if (t) t.socketError = err;
      recent.error = err;
    });
    return socket;
  };
  class Https extends HttpsAgent {
    override createConnection(...args: Parameters<HttpsAgent['createConnection']>) {
      return record(super.createConnection(...args) as Socket);
    }
  }
  class Http extends HttpAgent {
    override createConnection(...args: Parameters<HttpAgent['createConnection']>) {
      return record(super.createConnection(...args) as Socket);
    }
  }
  return { httpsAgent: new Https({ keepAlive: true, ...tls }), httpAgent: new Http({ keepAlive: true }) };
}

/**
 * One ACME account on one server, over acme-client, with what it lacks:
 * - its own TLS trust (caBundle, skipTLSVerify) instead of the process-wide axios defaults;
 * - nonce reuse: each response's Replay-Nonce signs the next request (RFC 8555 §6.5), instead of a
 *   HEAD newNonce before every POST (about half the round trips);
 * - typed errors: rate limits with their Retry-After, unreachable servers (with the socket's own
 *   error), problem documents with their type;
 * - a request counter, so benchmarks can show what a certificate costs the CA.
 * One session serves concurrent reconciles: each `call` traces its own responses.
 */
export class AcmeSession {
  readonly client: acme.Client;
  requests = 0;
  private readonly nonces: string[] = [];
  private readonly trace = new AsyncLocalStorage<CallTrace>();
  private readonly recent: { error?: Error } = {};
  private readonly http: {
    request: (url: unknown, method: unknown, opts?: Record<string, unknown>) => Promise<Response>;
    getDirectory: () => Promise<Record<string, unknown>>;
  };

  constructor(readonly options: AcmeServerOptions) {
    this.client = new acme.Client({
      directoryUrl: options.directoryUrl,
      accountKey: options.accountKeyPem,
      accountUrl: options.accountUrl,
      externalAccountBinding: options.externalAccountBinding,
      backoffAttempts: 1,
    });
    const agents = recordingAgents(this.trace, { ca: options.caPem, rejectUnauthorized: !options.skipTLSVerify }, this.recent);
    const http = (
      this.client as unknown as {
        http: {
          request: (url: unknown, method: unknown, opts?: Record<string, unknown>) => Promise<Response>;
          getNonce: () => Promise<string>;
          getDirectory: () => Promise<Record<string, unknown>>;
        };
      }
    ).http;
    this.http = http;
    const request = http.request.bind(http);
    const getNonce = http.getNonce.bind(http);
    http.request = async (url: unknown, method: unknown, opts: Record<string, unknown> = {}) => {
      this.requests++;
      const t = this.trace.getStore();
      if (t) {
        const key = `${String(method).toUpperCase()} ${String(url)}`;
        const same = (t.sent.get(key) ?? 0) + 1;
        t.sent.set(key, same);
        const all = ++t.total;
        // A new nonce (HEAD newNonce) is fetched before any POST when no answer brought one: the
        // total bounds those; only the same POST or GET repeated is a loop.
        const repeated = same > MAX_SAME_REQUEST && String(method).toUpperCase() !== 'HEAD';
        if (repeated || all > MAX_REQUESTS_PER_OPERATION) {
          throw new AcmeProtocolError(
            options.directoryUrl,
            repeated
              ? `its answers made the client send ${key} more than ${MAX_SAME_REQUEST} times in one operation`
              : `its answers made one operation send more than ${MAX_REQUESTS_PER_OPERATION} requests`,
          );
        }
      }
      this.recent.error = undefined;
      const started = performance.now();
      const observe = (status: number | 'error') =>
        options.observe?.({ method: String(method).toUpperCase(), url: String(url), status, seconds: (performance.now() - started) / 1000 });
      let resp: Response;
      const seen: Observed = { timedOut: false, bytes: 0, redirects: 0 };
      const { timeoutMs = REQUEST_TIMEOUT_MS, ...axiosOpts } = opts as { timeoutMs?: number };
      // Not AbortSignal.timeout: Node keeps its timer (made in this call's async context, so holding
      // the trace) until the signal is collected, and the answer holds the signal: nothing of any
      // request was ever freed. A timer cleared when the request ends holds nothing afterwards.
      const deadline = new AbortController();
      const timer = setTimeout(() => deadline.abort(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs);
      try {
        // Bounded in time as a whole (not only between bytes: a server may trickle) and in size.
        resp = await request(url, method, {
          ...axiosOpts,
          ...agents,
          timeout: timeoutMs,
          signal: deadline.signal,
          maxContentLength: MAX_RESPONSE_BYTES,
          maxBodyLength: MAX_RESPONSE_BYTES,
          maxRedirects: MAX_REDIRECTS,
          onDownloadProgress: (e: { loaded: number }) => void (seen.bytes = e.loaded),
          beforeRedirect: () => void seen.redirects++,
        });
        observe(resp.status);
      } catch (err) {
        observe('error');
        seen.timedOut = deadline.signal.aborted;
        const f = requestFailure(err as Error & { code?: string }, t?.socketError ?? this.recent.error, seen, {
          timeoutMs,
          maxBytes: MAX_RESPONSE_BYTES,
          maxRedirects: MAX_REDIRECTS,
        });
        throw f.kind === 'protocol' ? new AcmeProtocolError(options.directoryUrl, f.cause) : new AcmeUnavailableError(options.directoryUrl, f.cause);
      } finally {
        clearTimeout(timer);
      }
      if (t) t.lastAnswer = lastAnswer(resp);
      const nonce = resp.headers['replay-nonce'];
      // A badNonce answer's fresh nonce is used by acme-client's own retry: do not hand it out twice.
      const badNonce = (resp.data as { type?: string } | undefined)?.type === 'urn:ietf:params:acme:error:badNonce';
      if (nonce && !badNonce) {
        this.nonces.push(nonce);
        // Servers expire nonces; a few spare are plenty (each stale one costs a badNonce retry).
        if (this.nonces.length > 8) this.nonces.shift();
      }
      return resp;
    };
    http.getNonce = async () => this.nonces.pop() ?? getNonce();
  }

  /** The directory's ARI and profile resources (acme-client caches the directory for a day). */
  async directory(): Promise<DirectoryFeatures> {
    return this.call(async () => {
      const d = (await this.http.getDirectory()) as { newAccount?: unknown; renewalInfo?: unknown; meta?: { profiles?: unknown } };
      const profiles = d.meta?.profiles;
      return {
        ...(typeof d.newAccount === 'string' && d.newAccount ? { newAccount: d.newAccount } : {}),
        ...(typeof d.renewalInfo === 'string' && d.renewalInfo ? { renewalInfo: d.renewalInfo } : {}),
        ...(profiles && typeof profiles === 'object' && !Array.isArray(profiles)
          ? { profiles: Object.fromEntries(Object.entries(profiles).map(([k, v]) => [k, typeof v === 'string' ? v : ''])) }
          : {}),
      };
    });
  }

  /**
   * One certificate's renewal info (RFC 9773 §4.2): an unauthenticated GET of the renewalInfo
   * resource, a slash, and the certificate's identifier. An error status is one of the typed errors.
   */
  async renewalInfo(renewalInfoUrl: string, certId: string): Promise<RenewalInfoAnswer> {
    return this.call(async () => {
      // Advice, not issuance: a server slower than this is asked again later, and holds a worker less.
      const resp = await this.http.request(`${renewalInfoUrl.replace(/\/+$/, '')}/${certId}`, 'get', { timeoutMs: RENEWAL_INFO_TIMEOUT_MS });
      if (resp.status >= 300) throw new Error(`renewal info answered ${resp.status}`);
      return { body: resp.data, retryAfter: resp.headers['retry-after'] };
    });
  }

  /** Runs one acme-client call, turning what went wrong into the errors above. */
  async call<T>(fn: (c: acme.Client) => Promise<T>): Promise<T> {
    const t: CallTrace = { sent: new Map(), total: 0 };
    try {
      return await this.trace.run(t, () => fn(this.client));
    } catch (err) {
      if (err instanceof AcmeUnavailableError || err instanceof AcmeProtocolError) throw err;
      const resp = t.lastAnswer;
      const problem = resp?.problem ?? {};
      // A server's words reach status fields and events: bounded, since a tenant's server may send
      // a megabyte of them for every certificate (and status is stored in etcd and every cache).
      // (A problem document's words were bounded when kept.)
      const detail = problem.detail ?? boundedText(String((err as Error).message));
      if (resp && (resp.status === 429 || problem.type?.endsWith(':rateLimited'))) {
        throw new AcmeRateLimitError(parseRetryAfter(resp.retryAfter, Date.now()) ?? 60_000, detail);
      }
      if (resp && resp.status >= 500) throw new AcmeUnavailableError(this.options.directoryUrl, `${resp.status}: ${detail}`, resp.status);
      if (resp && resp.status >= 400) throw new AcmeProblemError(problem.type ?? 'about:blank', resp.status, detail);
      // Anything else acme-client tripped over is the server's answer, not ours to crash on.
      throw new AcmeProtocolError(this.options.directoryUrl, boundedText((err as Error).message));
    }
  }
}

export type { acme };
