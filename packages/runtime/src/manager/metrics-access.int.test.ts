import { waitFor } from '@opkit/testing';
import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterRole, ClusterRoleBinding, ConfigMap, Namespace, Secret, ServiceAccount } from '../client/kind.js';
import { controllerFor } from '../controller/builder.js';
import type { Trigger } from '../controller/provenance.js';
import { testManager } from '../testing/harness.js';
import { useControlPlane } from '../testing/control-plane-suite.js';
import type { Manager } from './manager.js';

/** The status and the first bytes of a GET over HTTPS (a heap snapshot is too big to keep whole). */
function head(port: number, path: string, token: string, bytes = 64): Promise<{ status: number; start: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, rejectUnauthorized: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let start = '';
      res.on('data', (d) => {
        start += d;
        if (start.length >= bytes) res.destroy();
      });
      res.on('close', () => resolve({ status: res.statusCode!, start: start.slice(0, bytes) }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** GET over HTTPS, trusting the manager's self-signed certificate as Prometheus' scrape config does (insecureSkipVerify). */
function get(port: number, path: string, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, rejectUnauthorized: false, headers: token ? { authorization: `Bearer ${token}` } : {} }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('secured /metrics and /debug/queue, with reconcile provenance', () => {
  const suite = useControlPlane({ audit: true }, async (_, admin) => {
    for (const name of ['monitoring', 'apps']) await admin.create(Namespace, { metadata: { name } });
    for (const name of ['prometheus', 'nobody', 'grafana', 'profiler']) await admin.create(ServiceAccount, { metadata: { namespace: 'monitoring', name } });
    await admin.create(ClusterRole, {
      metadata: { name: 'profiler' },
      rules: [{ nonResourceURLs: ['/debug/heap-snapshot', '/debug/cpu-profile', '/debug/widgets'], verbs: ['get'] }],
    });
    await admin.create(ClusterRoleBinding, {
      metadata: { name: 'profiler' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'profiler' },
      subjects: [{ kind: 'ServiceAccount', namespace: 'monitoring', name: 'profiler' }],
    });
    await admin.create(ClusterRole, { metadata: { name: 'metrics-reader' }, rules: [{ nonResourceURLs: ['/metrics', '/debug/queue'], verbs: ['get'] }] });
    await admin.create(ClusterRoleBinding, {
      metadata: { name: 'prometheus-metrics-reader' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'metrics-reader' },
      subjects: [
        { kind: 'ServiceAccount', namespace: 'monitoring', name: 'prometheus' },
        { kind: 'ServiceAccount', namespace: 'monitoring', name: 'grafana' },
      ],
    });
  });
  let manager: Manager;
  let port: number;
  const seen: (readonly Trigger[])[] = [];
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    for (const name of ['prometheus', 'nobody', 'grafana', 'profiler'])
      tokens[name] = (await suite.plane.serviceAccountCredentials('monitoring', name)).kubeConfig.getCurrentUser()!.token!;
    const t = testManager(suite.plane.kubeConfig, { metricsSecure: true, namespaces: ['apps'] });
    manager = t.manager;
    manager.add(
      controllerFor(ConfigMap)
        // A Secret named <configmap>-credentials reconciles its ConfigMap.
        .watches(Secret, (s) =>
          s.metadata.name.endsWith('-credentials') ? [{ namespace: s.metadata.namespace, name: s.metadata.name.replace(/-credentials$/, '') }] : [],
        )
        .reconcile((req, ctx) => {
          if (req.name === 'app') seen.push(ctx.triggers);
        }),
    );
    manager.addMetricsRoute('/debug/widgets', () => ({ status: 200, contentType: 'text/plain', body: 'three widgets\n' }));
    await manager.start();
    port = manager.ports.metrics!;
  });
  afterAll(() => manager?.stop());

  it('answers 401 without a token, 403 without the role, and the metrics with it', async () => {
    const anonymous = await get(port, '/metrics');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toMatch(/bearer token is required/);
    expect((await get(port, '/metrics', 'not-a-token')).status).toBe(401);
    const nobody = await get(port, '/metrics', tokens.nobody);
    expect(nobody.status).toBe(403);
    expect(nobody.body).toMatch(/user "system:serviceaccount:monitoring:nobody" cannot get path "\/metrics"/);
    const prometheus = await get(port, '/metrics', tokens.prometheus);
    expect(prometheus.status).toBe(200);
    expect(prometheus.body).toMatch(/controller_runtime_reconcile_total/);
    expect((await get(port, '/debug/queue', tokens.nobody)).status).toBe(403);
    // Plain HTTP is not served at all.
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
  });

  it('shows why the last reconcile of an object ran, and hands the same triggers to the reconciler', async () => {
    const { admin } = suite;
    await admin.create(ConfigMap, { metadata: { namespace: 'apps', name: 'app' }, data: { v: '1' } });
    await waitFor('the first reconcile', () => seen.length >= 1);
    expect(seen[0]).toEqual([expect.objectContaining({ source: 'watch', kind: 'ConfigMap', namespace: 'apps', name: 'app', event: 'add' })]);

    await admin.create(Secret, { metadata: { namespace: 'apps', name: 'app-credentials' }, stringData: { password: 'x' } } as never);
    const last = await waitFor('a reconcile caused by the Secret', async () => {
      const res = await get(port, '/debug/queue?key=apps/app', tokens.prometheus);
      const view = JSON.parse(res.body) as { controllers: { last: { triggers: Trigger[]; result: string; reconcileId: string }[] }[] };
      const l = view.controllers[0]?.last[0];
      return l?.triggers.some((t) => t.source === 'watch' && t.kind === 'Secret') ? l : undefined;
    });
    expect(last.triggers).toEqual([expect.objectContaining({ source: 'watch', kind: 'Secret', namespace: 'apps', name: 'app-credentials', event: 'add' })]);
    expect(last.result).toBe('success');
    expect(seen.at(-1)).toEqual(last.triggers);

    const whole = JSON.parse((await get(port, '/debug/queue', tokens.prometheus)).body) as {
      controllers: { controller: string; running: boolean }[];
      informers: { informer: string; synced: boolean }[];
    };
    expect(whole.controllers).toEqual([expect.objectContaining({ controller: 'configmap', running: true })]);
    expect(whole.informers.map((i) => [i.informer, i.synced])).toEqual(
      expect.arrayContaining([
        ['configmaps', true],
        ['secrets', true],
      ]),
    );

    const metrics = (await get(port, '/metrics', tokens.prometheus)).body;
    expect(metrics).toMatch(/opkit_reconcile_triggers_total\{controller="configmap",trigger="watch:Secret"\} [1-9]/);
  });

  it('asks the API server once for a burst of scrapes with a new token', async () => {
    await new Promise((r) => setTimeout(r, 1_100)); // the audit log's times are to the second here and there
    const since = new Date();
    const answers = await Promise.all(Array.from({ length: 20 }, () => get(port, '/metrics', tokens.grafana)));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    const reviews = suite.plane.audit!.query({ since, resource: 'tokenreviews', verbs: ['create'] });
    const decisions = suite.plane.audit!.query({ since, resource: 'subjectaccessreviews', verbs: ['create'] });
    expect([reviews.length, decisions.length]).toEqual([1, 1]);
  });

  it('keeps serving a reader it allowed while the API server is away (bounded), and says why it cannot decide for a new one', async () => {
    expect((await get(port, '/metrics', tokens.prometheus)).status).toBe(200);
    await suite.plane.apiServer.stop();
    try {
      // Past the 10 s the answer is kept for: the API server cannot be asked again.
      await new Promise((r) => setTimeout(r, 11_000));
      const during = await get(port, '/metrics', tokens.prometheus);
      expect(during.status).toBe(200);
      expect(during.body).toMatch(/controller_runtime_reconcile_total/);
      const unknown = await get(port, '/metrics', 'a-token-never-seen');
      expect(unknown.status).toBe(503);
      expect(unknown.body).toMatch(/cannot check the token: the API server/);
    } finally {
      await suite.plane.apiServer.start(60_000);
    }
  });

  it("serves the operator's own routes, a heap snapshot and a CPU profile, each only to callers granted its path", async () => {
    expect((await get(port, '/debug/widgets', tokens.prometheus)).status).toBe(403);
    expect(await get(port, '/debug/widgets', tokens.profiler)).toEqual({ status: 200, body: 'three widgets\n' });
    expect(() => manager.addMetricsRoute('/debug/late', () => ({ status: 200, contentType: 'text/plain', body: '' }))).toThrow(/has started/);

    expect((await get(port, '/debug/heap-snapshot', tokens.prometheus)).status).toBe(403);
    const snapshot = await head(port, '/debug/heap-snapshot', tokens.profiler!);
    expect(snapshot).toMatchObject({ status: 200, start: expect.stringMatching(/^\{"snapshot":\{/) });

    const [profile, meanwhile] = await Promise.all([
      get(port, '/debug/cpu-profile?seconds=1', tokens.profiler),
      new Promise((r) => setTimeout(r, 200)).then(() => get(port, '/debug/cpu-profile?seconds=1', tokens.profiler)),
    ]);
    expect(profile.status).toBe(200);
    const p = JSON.parse(profile.body) as { nodes: unknown[]; startTime: number; endTime: number };
    expect(p.nodes.length).toBeGreaterThan(0);
    expect(p.endTime - p.startTime).toBeGreaterThanOrEqual(900_000); // µs
    expect(meanwhile.status).toBe(409);
    expect((await get(port, '/debug/cpu-profile?seconds=soon', tokens.profiler)).status).toBe(400);
  });

  it('never serves a heap snapshot without --metrics-secure, even with --insecure-debug-queue', async () => {
    const t = testManager(suite.plane.kubeConfig, { insecureDebugQueue: true, namespaces: ['apps'] });
    await t.manager.start();
    try {
      const res = await fetch(`http://127.0.0.1:${t.manager.ports.metrics!}/debug/heap-snapshot`);
      expect(res.status).toBe(403);
      expect(await res.text()).toMatch(/holds the secrets the process holds/);
    } finally {
      await t.manager.stop();
    }
  });
});
