import { connect as netConnect, isIP, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { Agent as HttpAgent, type AgentOptions as HttpAgentOptions } from 'node:http';
import { Agent as HttpsAgent, type AgentOptions } from 'node:https';

/**
 * Reaching the API server through an HTTP proxy, as client-go does: the cluster's `proxy-url` in the
 * kubeconfig when set (whatever the server's address), else HTTPS_PROXY / HTTP_PROXY (by the
 * server's scheme; upper or lower case) unless NO_PROXY names the server. As Go's
 * `httpproxy.FromEnvironment`, the environment never proxies localhost or a loopback address.
 * The tunnel is HTTP CONNECT (to an http:// or https:// proxy, with Basic credentials from the
 * proxy URL); the API server's TLS runs inside it, end to end.
 */
export class ProxyConfigError extends Error {
  override name = 'ProxyConfigError';
}

/** A proxy that would not (or could not) open a tunnel, in its words where it gave any. */
export class ProxyTunnelError extends Error {
  override name = 'ProxyTunnelError';
}

export type ProxyEnv = Record<string, string | undefined>;

const envValue = (env: ProxyEnv, name: string) => env[name] || env[name.toLowerCase()] || undefined;

/** The proxy for `server`, or undefined to connect directly. */
export function proxyFor(server: URL, proxyUrl: string | undefined, env: ProxyEnv = process.env): URL | undefined {
  if (proxyUrl) return parseProxyUrl(proxyUrl, "the kubeconfig's proxy-url");
  const name = server.protocol === 'https:' ? 'HTTPS_PROXY' : 'HTTP_PROXY';
  const raw = envValue(env, name);
  if (!raw) return undefined;
  const host = server.hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || isLoopback(host)) return undefined;
  if (noProxyMatches(envValue(env, 'NO_PROXY') ?? '', host, server.port || (server.protocol === 'https:' ? '443' : '80'))) return undefined;
  // As Go: a value without a scheme means http://.
  return parseProxyUrl(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`, name);
}

function parseProxyUrl(raw: string, from: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ProxyConfigError(`${from} "${raw}" is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ProxyConfigError(
      `${from} "${url.protocol}//${url.host}": only http:// and https:// proxies are supported (not ${url.protocol.replace(':', '')})`,
    );
  return url;
}

function isLoopback(host: string): boolean {
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || host === '0:0:0:0:0:0:0:1';
  return false;
}

/**
 * NO_PROXY as Go reads it: comma-separated entries; `*` matches everything; an IP or a CIDR
 * matches addresses; `example.com` and `.example.com` match that domain and its subdomains;
 * `host:port` matches only that port.
 */
export function noProxyMatches(noProxy: string, host: string, port: string): boolean {
  const h = host.toLowerCase();
  for (let entry of noProxy.split(',').map((e) => e.trim().toLowerCase())) {
    if (!entry) continue;
    if (entry === '*') return true;
    const cidr = /^([0-9a-f.:]+)\/(\d{1,3})$/.exec(entry);
    if (cidr) {
      if (inCidr(h, cidr[1]!, Number(cidr[2]))) return true;
      continue;
    }
    let entryPort: string | undefined;
    const hp = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(entry);
    if (hp) [entry, entryPort] = [hp[1]!.replace(/^\[|\]$/g, ''), hp[2]];
    if (entryPort && entryPort !== port) continue;
    if (isIP(entry)) {
      if (entry === h) return true;
      continue;
    }
    const domain = entry.replace(/^\*?\./, '');
    if (h === domain || h.endsWith(`.${domain}`)) return true;
  }
  return false;
}

function inCidr(host: string, base: string, bits: number): boolean {
  const a = ipBytes(host);
  const b = ipBytes(base);
  if (!a || !b || a.length !== b.length || bits > a.length * 8) return false;
  for (let i = 0; i < bits; i++) {
    const mask = 0x80 >> (i % 8);
    if ((a[i >> 3]! & mask) !== (b[i >> 3]! & mask)) return false;
  }
  return true;
}

function ipBytes(ip: string): number[] | undefined {
  if (isIP(ip) === 4) return ip.split('.').map(Number);
  if (isIP(ip) !== 6) return undefined;
  const [head, tail = ''] = ip.split('::');
  const part = (s: string) => (s ? s.split(':') : []);
  const groups = ip.includes('::') ? [...part(head!), ...Array(8 - part(head!).length - part(tail).length).fill('0'), ...part(tail)] : part(ip);
  if (groups.length !== 8 || groups.some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return undefined;
  return groups.flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 0xff]);
}

/** The bound on a proxy's answer to CONNECT: its headers are from outside. */
export const MAX_CONNECT_RESPONSE_BYTES = 16 * 1024;

/**
 * Reads a proxy's answer to CONNECT from the bytes seen so far: `undefined` while incomplete, the
 * status otherwise, and the bytes after the header (a proxy may not send any before the tunnel is
 * used; if it does, they belong to the tunnel). Throws on an answer that is not HTTP or too long.
 */
export function parseConnectResponse(buf: Buffer): { status: number; reason: string; rest: Buffer } | undefined {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) {
    if (buf.length > MAX_CONNECT_RESPONSE_BYTES)
      throw new ProxyTunnelError(`the proxy's answer to CONNECT exceeds ${MAX_CONNECT_RESPONSE_BYTES} bytes without ending`);
    return undefined;
  }
  if (end > MAX_CONNECT_RESPONSE_BYTES) throw new ProxyTunnelError(`the proxy's answer to CONNECT exceeds ${MAX_CONNECT_RESPONSE_BYTES} bytes`);
  const statusLine = buf.subarray(0, Math.min(end, 512)).toString('latin1').split('\r\n')[0]!;
  const m = /^HTTP\/1\.[01] (\d{3})(?: (.*))?$/.exec(statusLine);
  if (!m) throw new ProxyTunnelError(`the proxy answered CONNECT with "${statusLine.slice(0, 80).replace(/[^\x20-\x7e]/g, '?')}", not HTTP`);
  return { status: Number(m[1]), reason: (m[2] ?? '').slice(0, 200).replace(/[^\x20-\x7e]/g, '?'), rest: buf.subarray(end + 4) };
}

/** Opens a CONNECT tunnel to `target` (host:port) through `proxy`; resolves with the raw socket. */
export function openTunnel(proxy: URL, target: string, timeoutMs = 15_000): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const port = Number(proxy.port || (proxy.protocol === 'https:' ? 443 : 80));
    const host = proxy.hostname.replace(/^\[|\]$/g, '');
    const socket: Socket = proxy.protocol === 'https:' ? tlsConnect({ host, port, servername: isIP(host) ? undefined : host }) : netConnect({ host, port });
    const fail = (err: Error) => {
      socket.destroy();
      reject(err);
    };
    socket.setTimeout(timeoutMs, () => fail(new ProxyTunnelError(`the proxy ${proxy.host} did not open a tunnel within ${timeoutMs / 1000}s`)));
    socket.once('error', (err) => fail(new ProxyTunnelError(`the proxy ${proxy.host}: ${err.message}`)));
    let seen = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      seen = Buffer.concat([seen, chunk]);
      let answer;
      try {
        answer = parseConnectResponse(seen);
      } catch (err) {
        return fail(err as Error);
      }
      if (!answer) return;
      socket.off('data', onData);
      if (answer.status !== 200)
        return fail(
          new ProxyTunnelError(
            `the proxy ${proxy.host} refused the tunnel to ${target}: ${answer.status} ${answer.reason}${answer.status === 407 ? ' (it wants credentials: put them in the proxy URL, http://user:password@host:port)' : ''}`,
          ),
        );
      socket.setTimeout(0);
      socket.removeAllListeners('error');
      if (answer.rest.length) socket.unshift(answer.rest);
      resolve(socket);
    };
    socket.on('data', onData);
    const auth = proxy.username
      ? `Proxy-Authorization: Basic ${Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString('base64')}\r\n`
      : '';
    socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${auth}\r\n`);
  });
}

type Callback = (err: Error | null, stream: Duplex) => void;

/** An HTTPS agent whose connections run through a CONNECT tunnel; TLS to the API server inside it. */
export class TunnelingHttpsAgent extends HttpsAgent {
  constructor(
    private readonly proxy: URL,
    options: AgentOptions,
  ) {
    super(options);
  }

  override createConnection(options: ConnectionOptions & { host?: string | null; port?: number | null }, callback?: Callback): undefined {
    const target = `${options.host?.includes(':') ? `[${options.host}]` : options.host}:${options.port ?? 443}`;
    openTunnel(this.proxy, target).then(
      (raw) => {
        const host = options.host ?? undefined;
        const tls = tlsConnect({
          ...options,
          host,
          port: options.port ?? undefined,
          socket: raw,
          servername: options.servername ?? (host && !isIP(host) ? host : undefined),
        });
        callback?.(null, tls);
      },
      (err: Error) => callback?.(err, undefined as never),
    );
    return undefined;
  }
}

/** A plain-HTTP agent through a CONNECT tunnel (an http:// API server behind a proxy: rare, but allowed). */
export class TunnelingHttpAgent extends HttpAgent {
  constructor(
    private readonly proxy: URL,
    options: HttpAgentOptions,
  ) {
    super(options);
  }

  override createConnection(options: { host?: string | null; port?: number | null }, callback?: Callback): undefined {
    openTunnel(this.proxy, `${options.host}:${options.port ?? 80}`).then(
      (s) => callback?.(null, s),
      (err: Error) => callback?.(err, undefined as never),
    );
    return undefined;
  }
}
