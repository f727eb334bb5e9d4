import { startControlPlane, verifyOperatorChart, type ControlPlane, type RenderedVariants } from '@opkit/testing';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CDN_RULES } from '../controllers/cdncluster/controller.js';

const repo = join(import.meta.dirname, '../../../..');

describe('charts/cdn-operator', () => {
  let plane: ControlPlane;
  let rendered: RenderedVariants;
  beforeAll(async () => {
    plane = await startControlPlane();
  });
  afterAll(() => plane?.stop());

  it('lints, renders and is accepted by the API server; RBAC is exactly what the controller declares', async () => {
    rendered = await verifyOperatorChart(plane, {
      chartDir: join(repo, 'charts/cdn-operator'),
      rules: CDN_RULES,
      image: 'opkit/cdn-operator:0.1.0',
      leaseName: 'cdn-operator-leader',
    });
    // What a default install makes: the operator, its RBAC, secured metrics (and the helm test's reader).
    expect(rendered.defaults.map((o) => `${o.kind} ${o.metadata.name}`).sort()).toEqual([
      'ClusterRole opkit-cdn-operator',
      'ClusterRole opkit-cdn-operator-metrics-auth',
      'ClusterRole opkit-cdn-operator-metrics-reader',
      'ClusterRoleBinding opkit-cdn-operator',
      'ClusterRoleBinding opkit-cdn-operator-metrics-auth',
      'ClusterRoleBinding opkit-cdn-operator-test-metrics',
      'CustomResourceDefinition cdnclusters.cdn.opkit.dev',
      'Deployment opkit-cdn-operator',
      'Lease cdn-operator-leader',
      'Pod opkit-cdn-operator-test-metrics',
      'Role opkit-cdn-operator-leader-election',
      'RoleBinding opkit-cdn-operator-leader-election',
      'Service opkit-cdn-operator-metrics',
      'ServiceAccount opkit-cdn-operator',
      'ServiceAccount opkit-cdn-operator-test-metrics',
    ]);
  });
});
