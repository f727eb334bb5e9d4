import { Counter, Histogram, type Registry } from 'prom-client';
import type { RequestObserver } from './client.js';

/**
 * The URL path up to its first segment that carries an identifier (anything with a digit):
 * `/acme/order/123/456` → `/acme/order`, `/my-order/x7f` → `/my-order`. Bounded label values.
 */
export function pathClass(url: string): string {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return 'invalid';
  }
  const kept: string[] = [];
  for (const seg of path.split('/').filter(Boolean)) {
    if (/\d/.test(seg) || seg.length > 24) break;
    kept.push(seg);
  }
  return `/${kept.join('/')}`;
}

/**
 * Requests to ACME servers, as cert-manager counts them (its certmanager_http_acme_client_*):
 * what the operator costs each CA, and how fast the CA answers.
 */
export function acmeClientMetrics(registry: Registry): RequestObserver {
  const labelNames = ['scheme', 'host', 'path', 'method', 'status'] as const;
  const count = new Counter({ name: 'opkit_acme_client_requests_total', help: 'Requests to ACME servers', labelNames, registers: [registry] });
  const duration = new Histogram({
    name: 'opkit_acme_client_request_duration_seconds',
    help: 'Duration of requests to ACME servers',
    labelNames,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  return ({ method, url, status, seconds }) => {
    let u: URL | undefined;
    try {
      u = new URL(url);
    } catch {
      /* labelled invalid below */
    }
    const labels = { scheme: u?.protocol.replace(':', '') ?? '', host: u?.host ?? '', path: pathClass(url), method, status: String(status) };
    count.inc(labels);
    duration.observe(labels, seconds);
  };
}
