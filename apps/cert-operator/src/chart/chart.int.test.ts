import { startControlPlane, verifyOperatorChart, type ControlPlane } from '@opkit/testing';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RBAC } from '../manifests/generate.js';

const repo = join(import.meta.dirname, '../../../..');

describe('charts/cert-operator', () => {
  let plane: ControlPlane;
  beforeAll(async () => {
    plane = await startControlPlane();
  });
  afterAll(() => plane?.stop());

  it('lints, renders and is accepted by the API server; RBAC is exactly what the controllers declare', async () => {
    const rendered = await verifyOperatorChart(plane, { chartDir: join(repo, 'charts/cert-operator'), rules: RBAC, image: 'opkit/cert-operator:0.1.0', leaseName: 'cert-operator-leader' });
    const [dep] = rendered.defaults.filter((o) => o.kind === 'Deployment') as any[];
    expect(dep.spec.template.spec.containers[0].args).toEqual(expect.arrayContaining(['--cluster-resource-namespace=opkit-system', '--acme-http01-solver-image=opkit/acme-solver:0.1.0']));
    expect(rendered.defaults.filter((o) => o.kind === 'CustomResourceDefinition').map((o) => o.metadata.name).sort()).toEqual(
      expect.arrayContaining(['certificaterequests.cert.opkit.dev', 'certificates.cert.opkit.dev', 'clusterissuers.cert.opkit.dev', 'issuers.cert.opkit.dev']),
    );
    // Watching only team namespaces, the operator still reads ClusterIssuers' Secrets in its own.
    const own = rendered.namespaced.filter((o) => o.kind === 'Role' && o.metadata.name.endsWith('-cluster-resources')) as any[];
    expect(own.map((r) => [r.metadata.namespace, r.rules])).toEqual([['opkit-system', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch'] }]]]);
  });

  it('has its shared parts in step with charts/_common', () => {
    const r = spawnSync(process.execPath, [join(repo, 'tools/charts/sync-common.mjs'), '--check', 'cert-operator'], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});
