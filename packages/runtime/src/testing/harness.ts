import type { KubeConfig } from '@kubernetes/client-node';
import { createServer, type AddressInfo } from 'node:net';
import { ConfigMap } from '../client/kind.js';
import { controllerFor } from '../controller/builder.js';
import { Manager, type ManagerOptions } from '../manager/manager.js';
import { captureLogger } from './log-capture.js';

/**
 * A manager for tests: servers on free loopback ports, captured logs, quick reconnects.
 */
export function testManager(kubeConfig: KubeConfig, options: Partial<ManagerOptions> = {}) {
  const capture = captureLogger();
  const manager = new Manager({
    name: 'test-operator',
    kubeConfig,
    logger: capture.logger,
    metricsBindAddress: '127.0.0.1:0',
    healthProbeBindAddress: '127.0.0.1:0',
    processMetrics: false,
    watchBackoffMs: { initial: 200, max: 2_000 },
    liveness: { intervalMs: 2_000, timeoutMs: 3_000 },
    namespaces: [],
    // As runOperator's: a test reading something its operator did not declare fails, as it would in production.
    failOnMissingInformer: true,
    ...options,
    // Webhooks (when the operator registers any) on a free port: several test managers share a host.
    webhook: { bindAddress: '127.0.0.1:0', hosts: ['127.0.0.1'], ...options.webhook },
  });
  return { manager, logs: capture };
}

/**
 * A test manager whose one controller records, for each ConfigMap of `namespace`, the last
 * `data.v` it reconciled (`state`) and the deletions it saw (`deletes`): what fault tests check
 * to know that no change was lost.
 */
export function recordingManager(kubeConfig: KubeConfig, namespace: string, options: Partial<ManagerOptions> = {}) {
  const state = new Map<string, string>();
  const deletes: string[] = [];
  const t = testManager(kubeConfig, { namespaces: [namespace], ...options });
  t.manager.add(
    controllerFor(ConfigMap).reconcile(async (req, { cache }) => {
      const cm = await cache.get(ConfigMap, req);
      if (cm) state.set(req.name, cm.data?.v ?? '');
      else if (state.delete(req.name)) deletes.push(req.name);
    }),
  );
  return { ...t, state, deletes };
}

/** GET one of the manager's endpoints (/metrics, /healthz, /readyz, /cachez). */
export async function scrape(manager: Manager, path: '/metrics' | '/healthz' | '/readyz' | '/cachez'): Promise<{ status: number; body: string }> {
  const port = path === '/metrics' ? manager.ports.metrics : manager.ports.probes;
  if (!port) throw new Error(`the manager serves no ${path}`);
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: await res.text() };
}

/** Every series of one metric in a Prometheus exposition, with its labels. */
export function metricSeries(exposition: string, name: string): { labels: Record<string, string>; value: number }[] {
  const out: { labels: Record<string, string>; value: number }[] = [];
  for (const line of exposition.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const m = line.match(/^[^{\s]+(?:\{([^}]*)\})?\s+(\S+)/);
    if (!m) continue;
    out.push({ labels: Object.fromEntries([...(m[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]])), value: Number(m[2]) });
  }
  return out;
}

/** The value of one sample in a Prometheus exposition (sum over series matching the labels). */
export function metricValue(exposition: string, name: string, labels: Record<string, string> = {}): number {
  return metricSeries(exposition, name)
    .filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

/**
 * Webhooks for a test manager run on this machine: a free loopback port, a serving certificate for
 * 127.0.0.1 (kept in a Secret of `namespace`), and the URL to register (`withConversionClient`,
 * `webhookConfigurations`): the API server calls the test's process over TLS as it would a Service.
 */
export async function localWebhooks(namespace = 'default'): Promise<{ url: string; options: NonNullable<ManagerOptions['webhook']> }> {
  const port = await new Promise<number>((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const p = (srv.address() as AddressInfo).port;
      srv.close(() => resolve(p));
    });
  });
  return { url: `https://127.0.0.1:${port}`, options: { bindAddress: `127.0.0.1:${port}`, hosts: ['127.0.0.1'], secretNamespace: namespace } };
}
