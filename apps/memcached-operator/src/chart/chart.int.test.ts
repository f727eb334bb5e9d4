import { mergeRules } from '@opkit/runtime';
import { startControlPlane, verifyOperatorChart, type ControlPlane, type RenderedVariants } from '@opkit/testing';
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
});
