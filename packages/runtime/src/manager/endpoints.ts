import type { Client } from '../client/client.js';
import { systemClock, type Clock } from '../clock/clock.js';
import { issueCa, issueServing } from '../webhook/self-signed.js';
import { listen, parseBindAddress, type ListenOptions, type Route, type RunningServer } from './http-server.js';
import { profilingRoutes } from './profiling.js';
import { MetricsAccess } from './metrics-access.js';

/** A health or readiness check: true, or why not. */
export type HealthCheck = () => true | string | Promise<true | string>;

const YEAR_MS = 365 * 86_400_000;

/**
 * HTTPS with a self-signed certificate made in memory, and the TokenReview/SubjectAccessReview
 * gate, as controller-runtime's secure metrics server does: the scraper trusts the API server's
 * word about the caller, not the certificate.
 */
function secureOptions(o: { client: Client; name: string; podName?: string; clock?: Clock }): ListenOptions {
  const now = (o.clock ?? systemClock).now();
  const ca = issueCa(`${o.name}-metrics-ca`, now - 300_000, now + YEAR_MS);
  const hosts = ['localhost', '127.0.0.1', ...(o.podName ? [o.podName] : [])];
  const access = new MetricsAccess(o.client, o.clock);
  return { tls: issueServing(ca, hosts, now - 300_000, now + YEAR_MS), authorize: (req, path) => access.check(req.headers.authorization, path) };
}

/**
 * /metrics and /debug/queue on `addr` (none when `0`), secured when asked. /debug/queue names
 * objects and quotes their errors: without `secure` it is served only when `openDebugQueue` says so
 * (`--insecure-debug-queue`), never by default.
 */
export async function serveMetrics(
  addr: string,
  o: {
    render(): Promise<string>;
    contentType: string;
    debugQueue(key?: string): unknown;
    secure?: { client: Client; name: string; podName?: string; clock?: Clock };
    openDebugQueue?: boolean;
    /** Routes the operator added (Manager.addMetricsRoute), behind the same gate as /metrics. */
    extraRoutes?: Record<string, Route>;
  },
): Promise<RunningServer | undefined> {
  const bind = parseBindAddress(addr);
  if (!bind) return undefined;
  const closed = !o.secure && !o.openDebugQueue;
  return listen(
    {
      ...o.extraRoutes,
      ...profilingRoutes(!!o.secure),
      '/metrics': async () => ({ status: 200, contentType: o.contentType, body: await o.render() }),
      '/debug/queue': (url) =>
        closed
          ? {
              status: 403,
              contentType: 'text/plain; charset=utf-8',
              body: 'Forbidden: /debug/queue names objects and quotes their errors, so it is served only with --metrics-secure (to callers the API server authorizes); --insecure-debug-queue opens it to anyone who reaches this port\n',
            }
          : { status: 200, contentType: 'application/json', body: `${JSON.stringify(o.debugQueue(url.searchParams.get('key') ?? undefined), null, 2)}\n` },
    },
    bind,
    o.secure ? secureOptions(o.secure) : {},
  );
}

/**
 * The probe port (none when `0`): every check's answer, `?verbose` or on failure.
 * - `/healthz`: the process lives (the liveness probe).
 * - `/readyz`: this replica can answer the calls its Services route to it (the readiness probe).
 * - `/cachez`: what it keeps in sync with the cluster is in order: caches synced, watches live, the
 *   API server answering, webhook certificates kept. Not a probe: a red cache must not take a
 *   replica out of the webhook Service (see docs/runtime.md, "Readiness").
 */
export async function serveProbes(
  addr: string,
  checks: { health: Map<string, HealthCheck>; ready: Map<string, HealthCheck>; cache: Map<string, HealthCheck> },
): Promise<RunningServer | undefined> {
  const bind = parseBindAddress(addr);
  if (!bind) return undefined;
  const serve = (list: Map<string, HealthCheck>) => async (url: URL) => {
    const results = await Promise.all(
      [...list].map(
        async ([name, check]) =>
          [
            name,
            await Promise.resolve()
              .then(check)
              .catch((e: Error) => e.message),
          ] as const,
      ),
    );
    const failed = results.filter(([, r]) => r !== true);
    const verbose = url.searchParams.has('verbose') || failed.length > 0;
    const body = verbose
      ? `${results.map(([n, r]) => (r === true ? `[+]${n} ok` : `[-]${n} failed: ${r}`)).join('\n')}\n${failed.length ? 'check failed' : 'ok'}`
      : 'ok';
    return { status: failed.length ? 500 : 200, contentType: 'text/plain; charset=utf-8', body };
  };
  return listen({ '/healthz': serve(checks.health), '/readyz': serve(checks.ready), '/cachez': serve(checks.cache) }, bind);
}
