import { Counter, Histogram, type Registry } from 'prom-client';
import type { RequestObserver } from './client.js';

/**
 * The URL path up to its first segment that carries an identifier (anything with a digit, except a
 * draft's name: Let's Encrypt serves ARI under `/draft-ietf-acme-ari-03/renewalInfo/<id>`):
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
    if ((/\d/.test(seg) && !/^draft-[a-z-]+-\d{2}$/.test(seg)) || seg.length > 24) break;
    kept.push(seg);
  }
  return `/${kept.join('/')}`;
}

/**
 * What a request did, from its path class: its last segment, `_` for `-` (`/acme/new-order` →
 * `new_order`, `/acme/order` → `order`, Pebble's `/nonce-plz` → `nonce_plz`). cert-manager's
 * dashboards group by this `action` label; its values stay as bounded as the path classes.
 */
export function actionOf(pathClassValue: string): string {
  const last = pathClassValue.split('/').filter(Boolean).pop();
  return last ? last.replaceAll('-', '_') : 'root';
}

/**
 * Requests to ACME servers under cert-manager's names, so its dashboards and alerts work
 * unchanged: `certmanager_http_acme_client_request_count` and
 * `certmanager_http_acme_client_request_duration_seconds` (a histogram here, where cert-manager
 * has a summary: the `_sum` and `_count` its dashboards read are the same). Labelled by `action`
 * (cert-manager's current label) and `path` (its older one): what the operator costs each CA, and
 * how fast the CA answers.
 */
export function acmeClientMetrics(registry: Registry): RequestObserver {
  const labelNames = ['scheme', 'host', 'path', 'action', 'method', 'status'] as const;
  const count = new Counter({
    name: 'certmanager_http_acme_client_request_count',
    help: 'The number of requests made by the ACME client.',
    labelNames,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'certmanager_http_acme_client_request_duration_seconds',
    help: 'The HTTP request latencies in seconds for the ACME client.',
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
    const path = pathClass(url);
    const labels = { scheme: u?.protocol.replace(':', '') ?? '', host: u?.host ?? '', path, action: actionOf(path), method, status: String(status) };
    count.inc(labels);
    duration.observe(labels, seconds);
  };
}
