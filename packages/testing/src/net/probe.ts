import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface ProbeResult {
  status: number;
  body: string;
}

export interface ProbeOptions {
  ca?: string;
  cert?: string;
  key?: string;
  timeoutMs?: number;
}

/** One GET with a short timeout; resolves with status and body, rejects on connection errors. */
export function httpGet(url: string, opts: ProbeOptions = {}): Promise<ProbeResult> {
  return httpSend('GET', url, undefined, opts);
}

/** One POST of a JSON body, as httpGet (a test server's management API). */
export function httpPostJson(url: string, body: unknown, opts: ProbeOptions = {}): Promise<ProbeResult> {
  return httpSend('POST', url, JSON.stringify(body), opts);
}

function httpSend(method: string, url: string, body: string | undefined, opts: ProbeOptions): Promise<ProbeResult> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = (u.protocol === 'https:' ? httpsRequest : httpRequest)(
      u,
      // A User-Agent, because some servers (Pebble) refuse requests without one.
      {
        method,
        ca: opts.ca,
        cert: opts.cert,
        key: opts.key,
        timeout: opts.timeoutMs ?? 2_000,
        agent: false,
        headers: { 'user-agent': 'opkit-testing', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${url} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}
