import { mergeRules } from '@opkit/runtime';
import { helmTemplate, startControlPlane, verifyChart, type ControlPlane, type RenderedObject } from '@opkit/testing';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memcachedRbac } from '../controllers/memcached/rbac.js';

const repo = join(import.meta.dirname, '../../../..');
const chart = join(repo, 'charts/memcached-operator');

describe('charts/memcached-operator', () => {
  let plane: ControlPlane;
  let rendered: Record<string, RenderedObject[]>;
  const find = (variant: string, kind: string, name?: string) => rendered[variant].filter((o) => o.kind === kind && (!name || o.metadata.name === name));

  beforeAll(async () => {
    plane = await startControlPlane();
    rendered = await verifyChart(plane, chart, {
      defaults: {},
      namespaced: { watchNamespaces: ['team-a', 'team-b'], leaderElection: { enabled: true }, replicaCount: 2 },
      minimal: { crds: { enabled: false }, metrics: { enabled: false }, leaderElection: { enabled: false }, serviceAccount: { create: false, name: 'existing' } },
    });
  });
  afterAll(() => plane?.stop());

  it('has its shared parts in step with charts/_common', () => {
    const r = spawnSync(process.execPath, [join(repo, 'tools/charts/sync-common.mjs'), '--check', 'memcached-operator'], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('grants exactly the rules the controller declares, cluster-wide by default', () => {
    const [role] = find('defaults', 'ClusterRole');
    expect(role.rules).toEqual(mergeRules(memcachedRbac));
    expect(find('defaults', 'ClusterRoleBinding')[0]).toMatchObject({ subjects: [{ kind: 'ServiceAccount', name: 'opkit-memcached-operator', namespace: 'opkit-system' }] });
  });

  it('uses Roles in each watched namespace when watchNamespaces is set, and WATCH_NAMESPACE follows', () => {
    expect(find('namespaced', 'ClusterRole')).toEqual([]);
    expect(find('namespaced', 'Role', 'opkit-memcached-operator').map((r) => r.metadata.namespace).sort()).toEqual(['team-a', 'team-b']);
    const [dep] = find('namespaced', 'Deployment') as any[];
    expect(dep.spec.replicas).toBe(2);
    expect(dep.spec.template.spec.containers[0].env).toContainEqual({ name: 'WATCH_NAMESPACE', value: 'team-a,team-b' });
  });

  it('runs a hardened, probed Deployment with leader election on', () => {
    const [dep] = find('defaults', 'Deployment') as any[];
    const pod = dep.spec.template.spec;
    const c = pod.containers[0];
    expect(c.image).toBe('opkit/memcached-operator:0.1.0');
    expect(c.args).toEqual(expect.arrayContaining(['--leader-elect', '--leader-election-namespace=opkit-system', '--leader-election-id=memcached-operator-leader', '--metrics-bind-address=:8080', '--health-probe-bind-address=:8081']));
    expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, runAsNonRoot: true, capabilities: { drop: ['ALL'] } });
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'probes' });
    expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'probes' });
    expect(c.resources.requests).toBeDefined();
    const [lease] = find('defaults', 'Role', 'opkit-memcached-operator-leader-election') as any[];
    expect(lease.rules[0]).toEqual({ apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: ['memcached-operator-leader'], verbs: ['get', 'update', 'patch'] });
  });

  it('keeps the CRD on uninstall, or leaves it out', () => {
    const [crd] = find('defaults', 'CustomResourceDefinition');
    expect(crd.metadata.annotations?.['helm.sh/resource-policy']).toBe('keep');
    expect(find('minimal', 'CustomResourceDefinition')).toEqual([]);
    expect(find('minimal', 'Service')).toEqual([]);
    expect(find('minimal', 'ServiceAccount')).toEqual([]);
    expect(find('minimal', 'Role')).toEqual([]);
  });

  it('rejects values it does not know, with the offending key', async () => {
    await expect(helmTemplate(chart, { values: { replicaCont: 2 } })).rejects.toThrow(/additional properties 'replicaCont' not allowed/);
    await expect(helmTemplate(chart, { values: { logFormat: 'xml' } })).rejects.toThrow(/logFormat/);
    await expect(helmTemplate(chart, { values: { replicaCount: 2, leaderElection: { enabled: false } } })).rejects.toThrow(/replicaCount > 1 needs leaderElection.enabled=true/);
  });
});
