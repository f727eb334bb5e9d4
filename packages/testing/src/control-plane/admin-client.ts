import { request } from 'node:https';

export interface AdminClientConfig {
  server: string;
  ca: string;
  cert: string;
  key: string;
}

export class AdminRequestError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
    what: string,
  ) {
    let message = body;
    try {
      message = (JSON.parse(body) as { message?: string }).message ?? body;
    } catch {
      /* not a Status object */
    }
    super(`${what}: ${status} ${message}`);
  }
}

/** The harness's own minimal client for bootstrap calls (nodes, tokens); tests use their own. */
export function adminRequest<T = unknown>(cfg: AdminClientConfig, method: string, path: string, body?: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${cfg.server}${path}`,
      { method, ca: cfg.ca, cert: cfg.cert, key: cfg.key, headers: { 'content-type': 'application/json', accept: 'application/json' }, agent: false },
      (res) => {
        let data = '';
        res.on('data', (d) => (data += d));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve((data ? JSON.parse(data) : undefined) as T);
          else reject(new AdminRequestError(status, data, `${method} ${path}`));
        });
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}
