import { mergeRules } from '@opkit/runtime';
import { startControlPlane, verifyOperatorChart, type ControlPlane, type RenderedObject } from '@opkit/testing';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cdnRbac } from '../controllers/cdncluster/rbac.js';

const repo = join(import.meta.dirname, '../../../..');

describe('charts/cdn-operator', () => {
  let plane: ControlPlane;
  let rendered: Record<string, RenderedObject[]>;
  beforeAll(async () => {
    plane = await startControlPlane();
  });
  afterAll(() => plane?.stop());

  it('lints, renders and is accepted by the API server; RBAC is exactly what the controller declares', async () => {
    rendered = await verifyOperatorChart(plane, {
      chartDir: join(repo, 'charts/cdn-operator'),
      rules: mergeRules(cdnRbac),
      image: 'opkit/cdn-operator:0.1.0',
      leaseName: 'cdn-operator-leader',
    });
    expect(rendered.defaults.map((o) => o.kind).sort()).toEqual(['ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition', 'Deployment', 'Lease', 'Pod', 'Role', 'RoleBinding', 'Service', 'ServiceAccount']);
  });
});
