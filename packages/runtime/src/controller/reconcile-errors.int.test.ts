import { waitFor } from '@opkit/testing';
import { Type } from '@sinclair/typebox';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigMap, CoreEvent, CustomResourceDefinition, Namespace, Role, RoleBinding, Secret, ServiceAccount } from '../client/kind.js';
import { defineCustomResource } from '../crd/custom-resource.js';
import { Conditions } from '../crd/schemas.js';
import type { Condition } from '../helpers/conditions.js';
import type { Manager } from '../manager/manager.js';
import { ItemExponentialRateLimiter } from '../queue/rate-limiters.js';
import type { PolicyRule } from '../rbac/rules.js';
import { metricValue, scrape, testManager } from '../testing/harness.js';
import { controllerFor } from './builder.js';
import { untilAuthorizerSays } from '../testing/authorizer.js';
import { useControlPlane } from '../testing/control-plane-suite.js';

const Widget = defineCustomResource({
  group: 'test.opkit.dev',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  scope: 'Namespaced',
  spec: Type.Object({ colour: Type.String() }),
  status: Type.Object({ conditions: Type.Optional(Conditions) }),
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Reconciles that fail the way a user's cluster makes them fail: a verb missing from the role, a
 * kind the operator may not read, an await that never returns. The failure must show on the object,
 * must not poison readiness, must not hold a worker, and must heal once the cause is fixed.
 */
describe('reconcile errors a user can see and recover from', () => {
  const suite = useControlPlane({}, async (_plane, admin) => {
    await admin.create(CustomResourceDefinition, Widget.crd as never);
    await waitFor('the Widget CRD to be served', () => admin.list(Widget.kind).then(() => true));
  });
  let manager: Manager | undefined;
  afterEach(async () => {
    await manager?.stop();
    manager = undefined;
  });

  /** A namespace with a ServiceAccount whose Role holds exactly `rules`. */
  const operatorAccount = async (namespace: string, rules: PolicyRule[]) => {
    await suite.admin.create(Namespace, { metadata: { name: namespace } });
    await suite.admin.create(ServiceAccount, { metadata: { name: 'operator', namespace } });
    await suite.admin.create(Role, { metadata: { name: 'operator', namespace }, rules });
    await suite.admin.create(RoleBinding, {
      metadata: { name: 'operator', namespace },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'operator' },
      subjects: [{ kind: 'ServiceAccount', name: 'operator', namespace }],
    });
    return (await suite.plane.serviceAccountCredentials(namespace, 'operator')).kubeConfig;
  };
  const widgetRules: PolicyRule[] = [
    { apiGroups: ['test.opkit.dev'], resources: ['widgets'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: ['test.opkit.dev'], resources: ['widgets/status'], verbs: ['update', 'patch'] },
    { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
  ];
  const readyOf = async (namespace: string, name: string): Promise<Condition | undefined> =>
    ((await suite.admin.get(Widget.kind, { namespace, name })).status?.conditions as Condition[] | undefined)?.find((c) => c.type === 'Ready');

  it('puts a forbidden write on the object (Event and Ready condition) and heals once the role is fixed', async () => {
    const ns = 'perm';
    const kubeConfig = await operatorAccount(ns, [...widgetRules, { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create'] }]);
    const t = testManager(kubeConfig, { namespaces: [ns] });
    manager = t.manager;
    manager.add(
      controllerFor(Widget.kind)
        .owns(ConfigMap)
        // Retries are quick here so the test need not wait minutes for the default backoff.
        .withOptions({ errorCondition: 'Ready', rateLimiter: new ItemExponentialRateLimiter(5, 2_000) })
        .reconcile(async (req, ctx) => {
          const w = await ctx.cache.get(Widget.kind, req);
          if (!w) return;
          await ctx.apply(ConfigMap, { metadata: { name: req.name, namespace: ns }, data: { colour: w.spec.colour } }, await ctx.cache.get(ConfigMap, req));
          const conditions = ctx.setCondition(w.status?.conditions as Condition[] | undefined, {
            type: 'Ready',
            status: 'True',
            reason: 'Applied',
            message: 'the ConfigMap holds the colour',
          });
          await ctx.updateStatus(Widget.kind, w, { conditions });
        }),
    );
    await manager.start();
    await suite.admin.create(Widget.kind, { metadata: { name: 'w', namespace: ns }, spec: { colour: 'red' } });

    const ready = await waitFor(
      'the error on the Ready condition',
      async () => {
        const c = await readyOf(ns, 'w');
        return c?.status === 'False' && c;
      },
      { timeoutMs: 20_000 },
    );
    expect(ready.reason).toBe('Forbidden');
    expect(ready.message).toContain('cannot patch resource "configmaps"');
    const event = await waitFor('a Warning Event on the Widget', async () => {
      const events = await suite.admin.list(CoreEvent, { namespace: ns, fieldSelector: 'involvedObject.name=w' });
      return events.items.find((e) => e.type === 'Warning');
    });
    expect(event.reason).toBe('ReconcileError');
    expect(event.message).toContain('cannot patch resource "configmaps"');
    // Repeats aggregate into one Event rather than one per retry.
    await sleep(3_000);
    const warnings = (await suite.admin.list(CoreEvent, { namespace: ns, fieldSelector: 'involvedObject.name=w' })).items.filter((e) => e.type === 'Warning');
    expect(warnings.map((e) => `${e.reason}: ${e.message}`)).toHaveLength(1);
    expect(warnings[0]?.count).toBeGreaterThan(1);

    await suite.admin.patch(
      Role,
      { namespace: ns, name: 'operator' },
      { rules: [...widgetRules, { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create', 'patch'] }] },
    );
    await waitFor(
      'the Widget to converge once the role allows it',
      async () => (await readyOf(ns, 'w'))?.status === 'True' && (await suite.admin.find(ConfigMap, { namespace: ns, name: 'w' }))?.data?.colour === 'red',
      { timeoutMs: 20_000 },
    );
  });

  it("fails a reconcile that reads a kind it may not list with the API's words, and leaves readiness and cache health alone", async () => {
    const ns = 'lazy';
    const kubeConfig = await operatorAccount(ns, widgetRules);
    const errors: string[] = [];
    // The lazy path: a read of an undeclared kind starts an informer (runOperator refuses it instead).
    const t = testManager(kubeConfig, { namespaces: [ns], failOnMissingInformer: false });
    manager = t.manager;
    manager.add(
      controllerFor(Widget.kind)
        .withOptions({ rateLimiter: new ItemExponentialRateLimiter(500, 2_000) })
        .reconcile(async (req, { cache }) => {
          try {
            await cache.list(Secret, { namespace: req.namespace });
          } catch (err) {
            errors.push((err as Error).message);
            throw err;
          }
        }),
    );
    await manager.start();
    const t0 = Date.now();
    await suite.admin.create(Widget.kind, { metadata: { name: 'w', namespace: ns }, spec: { colour: 'blue' } });
    const message = await waitFor('the reconcile to fail', () => errors[0], { timeoutMs: 20_000 });
    console.log(`a forbidden read failed the reconcile after ${Date.now() - t0} ms`);
    expect(message).toContain('secrets is forbidden');
    expect(Date.now() - t0).toBeLessThan(15_000);
    await sleep(1_000);
    for (const path of ['/readyz', '/cachez'] as const) {
      const res = await scrape(manager, path);
      expect([path, res.status, res.body]).toEqual([path, 200, 'ok']);
    }
  });

  it('releases the worker of a reconcile past its timeout, but keeps its key until it settles', async () => {
    const ns = 'hang';
    await suite.admin.create(Namespace, { metadata: { name: ns } });
    let running = 0;
    let most = 0;
    let hangs = 0;
    let firstSettled: number | undefined;
    const done: string[] = [];
    const t = testManager(suite.plane.kubeConfig, { namespaces: [ns] });
    manager = t.manager;
    manager.add(
      controllerFor(ConfigMap)
        .withOptions({ reconcileTimeoutMs: 1_000, rateLimiter: new ItemExponentialRateLimiter(100, 1_000) })
        .reconcile(async (req) => {
          if (req.name === 'hangs') {
            most = Math.max(most, ++running);
            try {
              // Work deaf to its signal: an ACME order, a DNS update the fence cannot stop.
              if (++hangs === 1) await sleep(4_000);
            } finally {
              running--;
              if (hangs === 1) firstSettled = performance.now();
            }
          }
          done.push(req.name);
        }),
    );
    await manager.start();
    await suite.admin.create(ConfigMap, { metadata: { name: 'hangs', namespace: ns } });
    await sleep(200);
    await suite.admin.create(ConfigMap, { metadata: { name: 'fine', namespace: ns } });
    // One worker: 'fine' is reconciled only if the hung reconcile let go of it.
    await waitFor('the other object to be reconciled', () => done.includes('fine'), { timeoutMs: 10_000 });
    // Changes to the hung object meanwhile must wait for it, not run beside it.
    for (let i = 0; i < 5; i++) {
      await suite.admin.patch(ConfigMap, { namespace: ns, name: 'hangs' }, { data: { n: String(i) } });
      await sleep(200);
    }
    const queue = manager.debugQueue('hang/hangs').controllers[0]!;
    expect(queue.inFlight).toMatchObject([{ key: 'hang/hangs', timedOut: true }]);
    await waitFor('the hung key to be retried once it settled', () => hangs >= 2, { timeoutMs: 15_000 });
    expect(most).toBe(1);
    expect(firstSettled).toBeDefined();
    const metrics = (await scrape(manager, '/metrics')).body;
    expect(metricValue(metrics, 'controller_runtime_reconcile_errors_total', { controller: 'configmap' })).toBeGreaterThanOrEqual(1);
    expect(metricValue(metrics, 'controller_runtime_reconcile_timeouts_total', { controller: 'configmap' })).toBe(1);
    expect(t.logs.find(/reconcile timed out/).length).toBeGreaterThanOrEqual(1);
  });

  it('keeps its backoff when the failure it reports changes the object: the report does not trigger a retry', async () => {
    const ns = 'loop';
    await suite.admin.create(Namespace, { metadata: { name: ns } });
    let attempts = 0;
    const t = testManager(suite.plane.kubeConfig, { namespaces: [ns] });
    manager = t.manager;
    manager.add(
      controllerFor(Widget.kind)
        .withOptions({ errorCondition: 'Ready', rateLimiter: new ItemExponentialRateLimiter(100, 10_000) })
        .reconcile(() => {
          // A message that differs every time (a request id, a port): each report changes the object.
          throw new Error(`the backend refused request ${++attempts}`);
        }),
    );
    await manager.start();
    await suite.admin.create(Widget.kind, { metadata: { name: 'w', namespace: ns }, spec: { colour: 'red' } });
    await waitFor('the failure on the Ready condition', async () => (await readyOf(ns, 'w'))?.status === 'False', { timeoutMs: 10_000 });
    const from = attempts;
    await sleep(5_000);
    // The backoff from 100 ms doubles: 5 s hold about 6 attempts. Re-triggered by each report, hundreds.
    console.log(`${attempts - from} attempts in 5 s of failing`);
    expect(attempts - from).toBeLessThanOrEqual(8);
  });

  it('retries work that failed on a permission within seconds of the role being fixed, not at the next backoff step', async () => {
    const ns = 'regrant';
    const rules = (verbs: string[]) => [...widgetRules, { apiGroups: [''], resources: ['configmaps'], verbs }];
    const kubeConfig = await operatorAccount(ns, rules(['get', 'list', 'watch', 'create', 'patch']));
    const t = testManager(kubeConfig, { namespaces: [ns] });
    manager = t.manager;
    let attempts = 0;
    manager.add(
      controllerFor(Widget.kind)
        .owns(ConfigMap)
        // A long backoff, as a real one is after a while: 1 s doubling.
        .withOptions({ errorCondition: 'Ready', rateLimiter: new ItemExponentialRateLimiter(1_000, 120_000) })
        .reconcile(async (req, ctx) => {
          attempts++;
          const w = await ctx.cache.get(Widget.kind, req);
          if (!w) return;
          await ctx.apply(ConfigMap, { metadata: { name: req.name, namespace: ns }, data: { colour: w.spec.colour } }, await ctx.cache.get(ConfigMap, req));
          await ctx.updateStatus(Widget.kind, w, {
            conditions: ctx.setCondition(w.status?.conditions as Condition[] | undefined, {
              type: 'Ready',
              status: 'True',
              reason: 'Applied',
              message: w.spec.colour,
            }),
          });
        }),
    );
    await manager.start();
    await suite.admin.create(Widget.kind, { metadata: { name: 'w', namespace: ns }, spec: { colour: 'red' } });
    await waitFor('the Widget Ready', async () => (await readyOf(ns, 'w'))?.status === 'True', { timeoutMs: 20_000 });
    // The verb goes; a change fails on it and backs off: 1, 2, 4, 8, 16 s …
    await suite.admin.patch(Role, { namespace: ns, name: 'operator' }, { rules: rules(['get', 'list', 'watch', 'create']) });
    // The change waits for the API server's authorizer to see the new role: else the operator's write can pass under the old.
    await untilAuthorizerSays(
      suite.admin,
      { user: `system:serviceaccount:${ns}:operator`, verb: 'patch', group: '', resource: 'configmaps', namespace: ns },
      false,
    );
    await suite.admin.patch(Widget.kind, { namespace: ns, name: 'w' }, { spec: { colour: 'blue' } });
    const failingFrom = attempts;
    await waitFor('the failure on the object', async () => (await readyOf(ns, 'w'))?.reason === 'Forbidden', { timeoutMs: 20_000 });
    // Five failures (1 + 2 + 4 + 8 s apart): the next waits 16 s.
    await waitFor('five failed attempts', () => attempts - failingFrom >= 5, { timeoutMs: 40_000, intervalMs: 50 });
    const before = attempts;
    await suite.admin.patch(Role, { namespace: ns, name: 'operator' }, { rules: rules(['get', 'list', 'watch', 'create', 'patch']) });
    const fixedAt = performance.now();
    await waitFor('the Widget to converge once the role allows it', async () => (await readyOf(ns, 'w'))?.message === 'blue', {
      timeoutMs: 60_000,
      intervalMs: 200,
    });
    const after = performance.now() - fixedAt;
    console.log(`converged ${Math.round(after)} ms after the role was fixed (${attempts - before} attempts)`);
    expect(after).toBeLessThan(8_000);
  });
});
