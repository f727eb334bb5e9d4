import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface ProbeResult {
  status: number;
  body: string;
}

/** One GET with a short timeout; resolves with status and body, rejects on connection errors. */
export function httpGet(url: string, opts: { ca?: string; cert?: string; key?: string; timeoutMs?: number } = {}): Promise<ProbeResult> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = (u.protocol === 'https:' ? httpsRequest : httpRequest)(
      u,
      // A User-Agent, because some servers (Pebble) refuse requests without one.
      {
        method: 'GET',
        ca: opts.ca,
        cert: opts.cert,
        key: opts.key,
        timeout: opts.timeoutMs ?? 2_000,
        agent: false,
        headers: { 'user-agent': 'opkit-testing' },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', reject);
    req.end();
  });
}
