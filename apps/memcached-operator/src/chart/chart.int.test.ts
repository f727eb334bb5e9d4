import { mergeRules } from '@opkit/runtime';
import { helmTemplate, startControlPlane, verifyOperatorChart, type ControlPlane, type RenderedVariants } from '@opkit/testing';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memcachedRbac } from '../controllers/memcached/rbac.js';

const repo = join(import.meta.dirname, '../../../..');

describe('charts/memcached-operator', () => {
  let plane: ControlPlane;
  let rendered: RenderedVariants;
  beforeAll(async () => {
    plane = await startControlPlane();
  });
  afterAll(() => plane?.stop());

  it('lints, renders and is accepted by the API server; RBAC is exactly what the controller declares', async () => {
    rendered = await verifyOperatorChart(plane, {
      chartDir: join(repo, 'charts/memcached-operator'),
      rules: mergeRules(memcachedRbac),
      image: 'opkit/memcached-operator:0.1.0',
      leaseName: 'memcached-operator-leader',
      variants: { sharded: { sharding: { enabled: true }, leaderElection: { enabled: false }, replicaCount: 3 } },
    });
    // What a default install makes: the operator, its RBAC, secured metrics (and the helm test's reader), its conversion webhook and the migration of what is stored in an old version.
    expect(rendered.defaults.map((o) => `${o.kind} ${o.metadata.name}`).sort()).toEqual([
      'ClusterRole opkit-memcached-operator',
      'ClusterRole opkit-memcached-operator-ca-injection',
      'ClusterRole opkit-memcached-operator-metrics-auth',
      'ClusterRole opkit-memcached-operator-metrics-reader',
      'ClusterRole opkit-memcached-operator-storage-migration',
      'ClusterRoleBinding opkit-memcached-operator',
      'ClusterRoleBinding opkit-memcached-operator-ca-injection',
      'ClusterRoleBinding opkit-memcached-operator-metrics-auth',
      'ClusterRoleBinding opkit-memcached-operator-storage-migration',
      'ClusterRoleBinding opkit-memcached-operator-test-metrics',
      'CustomResourceDefinition memcacheds.cache.opkit.dev',
      'Deployment opkit-memcached-operator',
      'Lease memcached-operator-leader',
      'Pod opkit-memcached-operator-test-metrics',
      'Role opkit-memcached-operator-leader-election',
      'Role opkit-memcached-operator-webhook-certificates',
      'RoleBinding opkit-memcached-operator-leader-election',
      'RoleBinding opkit-memcached-operator-webhook-certificates',
      'Secret opkit-memcached-operator-webhook-tls',
      'Service opkit-memcached-operator-metrics',
      'Service opkit-memcached-operator-webhook',
      'ServiceAccount opkit-memcached-operator',
      'ServiceAccount opkit-memcached-operator-test-metrics',
    ]);
  });

  it("runs three replicas as a shard ring when asked: the flags, the ring's Leases and a Role for Leases, no leader election", async () => {
    const sharded = (rendered as unknown as Record<string, typeof rendered.defaults>).sharded!;
    const dep = sharded.find((o) => o.kind === 'Deployment') as unknown as {
      spec: { replicas: number; template: { spec: { containers: { args: string[] }[] } } };
    };
    expect(dep.spec.replicas).toBe(3);
    const args = dep.spec.template.spec.containers[0]!.args;
    expect(args).toEqual(expect.arrayContaining(['--shard', '--shard-namespace=opkit-system', '--shard-ring=memcached-operator']));
    expect(args.filter((a) => a.startsWith('--leader-elect'))).toEqual([]);
    const leases = sharded.filter((o) => o.kind === 'Lease').map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
    // The leader's Lease stays the release's: an old leader stopping after the switch may make it again.
    expect(leases.sort()).toEqual([
      'opkit-system/memcached-operator-coordinator',
      'opkit-system/memcached-operator-leader',
      'opkit-system/memcached-operator-shards',
    ]);
    const role = sharded.find((o) => o.kind === 'Role' && o.metadata.name === 'opkit-memcached-operator-sharding') as unknown as { rules: unknown[] };
    // What the manager's startup check asks for (ManagerOptions.sharding): Leases, by no name.
    expect(role.rules).toEqual([{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'create', 'update', 'delete'] }]);
    expect(sharded.some((o) => o.kind === 'RoleBinding' && o.metadata.name === 'opkit-memcached-operator-sharding')).toBe(true);
    // Sharded replicas may be disrupted one at a time like elected ones.
    expect(sharded.some((o) => o.kind === 'PodDisruptionBudget')).toBe(true);
  });

  it('refuses sharding beside leader election, and several replicas with neither, saying why', async () => {
    const chartDir = join(repo, 'charts/memcached-operator');
    await expect(helmTemplate(chartDir, { values: { sharding: { enabled: true } } })).rejects.toThrow(/sharding.enabled .*set leaderElection.enabled=false/);
    await expect(helmTemplate(chartDir, { values: { replicaCount: 2, leaderElection: { enabled: false } } })).rejects.toThrow(/replicaCount > 1 needs/);
  });
});
