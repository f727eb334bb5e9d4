import { startControlPlane, startFaultProxy, type ControlPlane } from '@opkit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CacheSyncError } from '../cache/cache.js';
import { Client } from '../client/client.js';
import { ConfigMap, Namespace, Role, RoleBinding, ServiceAccount } from '../client/kind.js';
import { Transport } from '../client/transport.js';
import { controllerFor } from '../controller/builder.js';
import { rule } from '../rbac/rules.js';
import { RbacError } from './rbac-check.js';
import { testManager } from '../testing/harness.js';

describe('a manager without the rights it needs', () => {
  let plane: ControlPlane;
  beforeAll(async () => {
    plane = await startControlPlane();
    const admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'test-admin' });
    for (const name of ['ops', 'a', 'b', 'c']) await admin.create(Namespace, { metadata: { name } });
    await admin.create(ServiceAccount, { metadata: { name: 'limited', namespace: 'ops' } });
    // It may get ConfigMaps, but not list or watch them.
    await admin.create(Role, { metadata: { name: 'get-only', namespace: 'ops' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] });
    await admin.create(RoleBinding, {
      metadata: { name: 'limited-get-only', namespace: 'ops' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'get-only' },
      subjects: [{ kind: 'ServiceAccount', name: 'limited', namespace: 'ops' }],
    });
  });
  afterAll(() => plane?.stop());

  it("fails to start with the API server's own explanation instead of hanging", async () => {
    const sa = await plane.serviceAccountCredentials('ops', 'limited');
    const { manager, logs } = testManager(sa.kubeConfig, { namespaces: ['ops'] });
    manager.add(controllerFor(ConfigMap).reconcile(() => undefined));
    const t0 = Date.now();
    const err = await manager.start().catch((e) => e);
    const seconds = (Date.now() - t0) / 1000;
    expect(err).toBeInstanceOf(CacheSyncError);
    expect(err.message).toContain("check the operator's RBAC");
    // "watch" where the list is streamed (a watch with sendInitialEvents), "list" where it is paginated.
    expect(err.message).toMatch(
      /configmaps is forbidden: User "system:serviceaccount:ops:limited" cannot (watch|list) resource "configmaps" in API group "" in the namespace "ops"/,
    );
    expect(seconds).toBeLessThan(30); // the default cache sync timeout is 120 s
    const logged = logs.find(/cannot list\/watch configmaps in namespace ops: forbidden/);
    expect(logged[0]).toMatchObject({ level: 50 });
    expect(manager.running).toBe(false);
  });

  it('checks every rule its controllers declare before the first reconcile, and names the missing ones', async () => {
    const admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'test-admin' });
    await admin.create(ServiceAccount, { metadata: { name: 'reader', namespace: 'ops' } });
    // May read and create ConfigMaps, but not patch or delete them.
    await admin.create(Role, {
      metadata: { name: 'read-create', namespace: 'ops' },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create'] }],
    });
    await admin.create(RoleBinding, {
      metadata: { name: 'reader-read-create', namespace: 'ops' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'read-create' },
      subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: 'ops' }],
    });
    const sa = await plane.serviceAccountCredentials('ops', 'reader');
    let reconciles = 0;
    const { manager } = testManager(sa.kubeConfig, { namespaces: ['ops'] });
    manager.add(
      controllerFor(ConfigMap)
        .withRbac([rule(ConfigMap, ['get', 'list', 'watch', 'create', 'patch', 'delete'])])
        .reconcile(() => void reconciles++),
    );
    await admin.create(ConfigMap, { metadata: { name: 'present', namespace: 'ops' } });
    const err = await manager.start().catch((e) => e);
    expect(err).toBeInstanceOf(RbacError);
    expect(err.message).toContain('cannot patch configmaps in namespace ops');
    expect(err.message).toContain('cannot delete configmaps in namespace ops');
    expect(err.message).not.toContain('cannot create');
    expect(reconciles).toBe(0);
    expect(manager.running).toBe(false);
  });

  it('checks its permissions through an API server that drops one review in five', async () => {
    // 35 permissions (8 verbs in 4 namespaces, 3 cluster-wide): retried as a set, the check would
    // pass about once in 1,600 tries; each review retries alone.
    const proxy = await startFaultProxy({
      upstream: plane.kubeConfig,
      seed: 7,
      rates: { reset: 0.1, serverError: 0.1, delay: 0, hang: 0, throttle: 0, writeThenFail: 0 },
    });
    const { manager } = testManager(proxy.kubeConfig(), { namespaces: ['ops', 'a', 'b', 'c'], cacheSyncTimeoutMs: 30_000 });
    manager.add(
      controllerFor(ConfigMap)
        .withRbac([
          rule(ConfigMap, ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection']),
          rule(Namespace, ['get', 'list', 'watch']),
        ])
        .reconcile(() => undefined),
    );
    try {
      await manager.start();
      expect(proxy.stats.injected).toBeGreaterThan(3);
      expect(manager.running).toBe(true);
    } finally {
      await manager.stop();
      await proxy.stop();
    }
  });
});
