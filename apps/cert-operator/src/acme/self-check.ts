import { Resolver } from 'node:dns/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { CHALLENGE_PATH } from './solver-resources.js';

export interface SelfCheckOptions {
  /** DNS servers to resolve challenge names with (host:port); the system resolver when empty. */
  nameservers?: string[];
  /** The port HTTP-01 validation uses: 80, except for test CAs such as Pebble. */
  port?: number;
  timeoutMs?: number;
}

const MAX_BODY = 1024 * 1024;

function lookupVia(nameservers: string[] | undefined): LookupFunction | undefined {
  if (!nameservers?.length) return undefined;
  const resolver = new Resolver();
  resolver.setServers(nameservers);
  return (hostname, options, callback) => {
    void resolver.resolve4(hostname).then(
      (addrs) => {
        const [first] = addrs;
        if (first === undefined) return callback(Object.assign(new Error(`${hostname} has no A record`), { code: 'ENOTFOUND' }), '', 4);
        if ((options as { all?: boolean }).all) return callback(null, addrs.map((address) => ({ address, family: 4 })) as never, 4);
        callback(null, first, 4);
      },
      (err: Error) => callback(err as NodeJS.ErrnoException, '', 4),
    );
  };
}

function get(url: URL, lookup: LookupFunction | undefined, timeoutMs: number): Promise<{ status: number; location?: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(
      url,
      // Let's Encrypt does not verify TLS on redirects to https, and neither does the self-check.
      { method: 'GET', lookup, agent: false, timeout: timeoutMs, rejectUnauthorized: false, headers: { 'user-agent': 'opkit-cert-operator/acme-self-check' } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          body += d;
          if (body.length > MAX_BODY) res.destroy();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, location: res.headers.location, body }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs / 1000}s`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * Fetches the challenge through the real route, as the CA will (DNS, then the ingress or gateway,
 * then the solver), following redirects. Resolves to undefined when the body is the key
 * authorization, or to a readable reason why not (the body itself is never echoed).
 */
export async function selfCheck(dnsName: string, token: string, key: string, opts: SelfCheckOptions = {}): Promise<string | undefined> {
  const host = dnsName.includes(':') ? `[${dnsName}]` : dnsName;
  let url = new URL(`http://${host}:${opts.port ?? 80}${CHALLENGE_PATH}${token}`);
  const lookup = lookupVia(opts.nameservers);
  for (let hops = 0; hops <= 5; hops++) {
    let res;
    try {
      res = await get(url, lookup, opts.timeoutMs ?? 10_000);
    } catch (err) {
      return `GET ${url}: ${(err as NodeJS.ErrnoException).code ?? ''} ${(err as Error).message}`.replace(/\s+/g, ' ').trim();
    }
    if (res.status >= 300 && res.status < 400 && res.location) {
      url = new URL(res.location, url);
      continue;
    }
    if (res.status !== 200) return `GET ${url}: expected status 200, got ${res.status}`;
    if (res.body !== key) return `GET ${url}: the response is not the key authorization for token ${token}`;
    return undefined;
  }
  return `GET ${url}: too many redirects`;
}
