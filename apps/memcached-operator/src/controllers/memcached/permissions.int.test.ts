import {
  Client,
  ClusterRole,
  ClusterRoleBinding,
  CustomResourceDefinition,
  Deployment,
  mergeRules,
  Namespace,
  ServiceAccount,
  Transport,
  withConversionClient,
  type Manager,
  type PolicyRule,
} from '@opkit/runtime';
import { localWebhooks, testManager, untilAuthorizerSays } from '@opkit/runtime/testing';
import { startControlPlane, waitFor, type ControlPlane } from '@opkit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemcachedAPI } from '../../api/conversion.js';
import { Memcached, type MemcachedObject } from '../../api/v1beta1/memcached.js';
import { addMemcachedOperator } from '../../operator.js';
import { memcachedRbac } from './rbac.js';

const NS = 'shop';
const condition = (mc: { status?: MemcachedObject['status'] }, type: string) => mc.status?.conditions?.find((c) => c.type === type);

/**
 * The operator as its chart runs it, under a role with exactly the rules it declares; then a verb
 * is taken away by the cluster's admin, and given back. While it fails, the Memcached's status must
 * say so in every field (not `phase: Available` beside `Available=False`); once the role is fixed
 * the work resumes within seconds, not at the next backoff step.
 */
describe('the memcached operator when its role loses a verb', () => {
  let plane: ControlPlane;
  let admin: Client;
  let manager: Manager;
  let rules: PolicyRule[];

  beforeAll(async () => {
    plane = await startControlPlane({ nodes: 1 });
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
    await admin.create(Namespace, { metadata: { name: NS } });
    const webhooks = await localWebhooks(NS);
    await admin.create(CustomResourceDefinition, withConversionClient(MemcachedAPI.crd, { url: webhooks.url }) as never);
    await waitFor('the Memcached CRD to be served', () => admin.list(Memcached.kind).then(() => true));
    await admin.create(ServiceAccount, { metadata: { namespace: NS, name: 'operator' } });
    await waitFor('the default ServiceAccount', () => plane.kubectl(['get', 'serviceaccount', 'default', '-n', NS]).then(() => true));
    const probe = testManager(plane.kubeConfig, { name: 'memcached-operator', webhook: webhooks.options });
    addMemcachedOperator(probe.manager);
    // As the chart renders them: Kubernetes rules, without the runtime's own notes.
    rules = mergeRules(memcachedRbac, probe.manager.webhooks.rbac(probe.manager.webhookOptions())).map(({ clusterScoped: _, ...r }) => r);
    await admin.create(ClusterRole, { metadata: { name: 'memcached-operator' }, rules });
    await admin.create(ClusterRoleBinding, {
      metadata: { name: 'memcached-operator' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'memcached-operator' },
      subjects: [{ kind: 'ServiceAccount', namespace: NS, name: 'operator' }],
    });
    const { kubeConfig } = await plane.serviceAccountCredentials(NS, 'operator');
    manager = testManager(kubeConfig, { name: 'memcached-operator', webhook: webhooks.options }).manager;
    addMemcachedOperator(manager);
    await manager.start();
  }, 240_000);
  afterAll(async () => {
    await manager?.stop();
    await plane?.stop();
  });

  const withoutPatchOnDeployments = () => rules.map((r) => (r.resources.includes('deployments') ? { ...r, verbs: r.verbs.filter((v) => v !== 'patch') } : r));

  it('shows the failure in every status field while it lasts, and converges within seconds of the fix', async () => {
    await admin.create(Memcached.kind, { metadata: { namespace: NS, name: 'cache' }, spec: { replicas: 1 } } as never);
    await waitFor('Available', async () => condition(await admin.get(Memcached.kind, { namespace: NS, name: 'cache' }), 'Available')?.status === 'True', {
      timeoutMs: 90_000,
    });

    await admin.patch(ClusterRole, { name: 'memcached-operator' }, { rules: withoutPatchOnDeployments() });
    // The replicas change once the API server's authorizer sees the new role: before, the operator's patch could pass under the old one.
    await untilAuthorizerSays(
      admin,
      { user: `system:serviceaccount:${NS}:operator`, verb: 'patch', group: 'apps', resource: 'deployments', namespace: NS },
      false,
    );
    await admin.patch(Memcached.kind, { namespace: NS, name: 'cache' }, { spec: { replicas: 2 } });
    const failing = await waitFor(
      'the failure on the Memcached',
      async () => {
        const mc = await admin.get(Memcached.kind, { namespace: NS, name: 'cache' });
        return condition(mc, 'Available')?.reason === 'Forbidden' && mc;
      },
      { timeoutMs: 30_000 },
    );
    expect(condition(failing, 'Available')).toMatchObject({
      status: 'False',
      reason: 'Forbidden',
      message: expect.stringContaining('cannot patch resource "deployments"'),
    });
    expect(condition(failing, 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'Forbidden',
      message: expect.stringContaining('cannot patch resource "deployments"'),
    });
    expect(failing.status?.phase).toBe('Degraded');

    await admin.patch(ClusterRole, { name: 'memcached-operator' }, { rules });
    const fixedAt = performance.now();
    await waitFor(
      'two pods, Available again',
      async () => {
        const mc = await admin.get(Memcached.kind, { namespace: NS, name: 'cache' });
        return (
          mc.status?.readyReplicas === 2 &&
          condition(mc, 'Available')?.status === 'True' &&
          condition(mc, 'Degraded')?.status === 'False' &&
          mc.status.phase === 'Available'
        );
      },
      { timeoutMs: 90_000, intervalMs: 250 },
    );
    const deployment = await admin.get(Deployment, { namespace: NS, name: 'cache' });
    expect(deployment.spec?.replicas).toBe(2);
    console.log(`converged ${Math.round(performance.now() - fixedAt)} ms after the role was fixed`);
    expect(performance.now() - fixedAt).toBeLessThan(60_000);
  });
});
