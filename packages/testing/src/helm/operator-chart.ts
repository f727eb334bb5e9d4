import { isDeepStrictEqual } from 'node:util';
import type { ControlPlane } from '../control-plane/control-plane.js';
import { helmTemplate } from './chart.js';
import { verifyChart, type RenderedObject } from './verify-chart.js';

export interface OperatorChartExpectations {
  chartDir: string;
  /** The rules the operator's controllers declare (mergeRules output, clusterScoped markers included). */
  rules: { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[]; clusterScoped?: boolean }[];
  /** e.g. opkit/cdn-operator:0.1.0 */
  image: string;
  leaseName: string;
  /** Extra values variants to render and dry-run apply. */
  variants?: Record<string, Record<string, unknown>>;
}

const fail = (msg: string, detail?: unknown): never => {
  throw new Error(detail === undefined ? msg : `${msg}\n${JSON.stringify(detail, null, 2)}`);
};

/**
 * The invariants every opkit operator chart holds, checked on what `helm template` renders and the
 * API server accepts (server-side dry-run): RBAC is exactly the controllers' rules (cluster-wide,
 * or Roles per watched namespace), the Deployment is hardened and probed with leader election on,
 * CRDs are kept on uninstall, and values outside the schema are refused.
 */
export async function verifyOperatorChart(plane: ControlPlane, x: OperatorChartExpectations): Promise<Record<string, RenderedObject[]>> {
  const ns = 'opkit-system';
  const rendered = await verifyChart(
    plane,
    x.chartDir,
    {
      defaults: {},
      namespaced: { watchNamespaces: ['team-a', 'team-b'], replicaCount: 2 },
      minimal: { crds: { enabled: false }, metrics: { enabled: false }, leaderElection: { enabled: false }, serviceAccount: { create: false, name: 'existing' } },
      ...x.variants,
    },
    ns,
  );
  const find = (variant: string, kind: string, name?: string) => rendered[variant].filter((o) => o.kind === kind && (!name || o.metadata.name === name)) as any[];
  const strip = (rules: OperatorChartExpectations['rules']) => rules.map(({ clusterScoped: _c, ...r }) => r);

  const [clusterRole] = find('defaults', 'ClusterRole');
  if (!isDeepStrictEqual(clusterRole?.rules, strip(x.rules))) fail('the ClusterRole does not grant exactly the declared rules', { rendered: clusterRole?.rules, declared: strip(x.rules) });
  // The leader-election Role, and a chart's Role for its own namespace's resources, are not per watched namespace.
  const roles = find('namespaced', 'Role').filter((r) => !r.metadata.name.endsWith('-leader-election') && !r.metadata.name.endsWith('-cluster-resources'));
  if (roles.map((r) => r.metadata.namespace).sort().join() !== 'team-a,team-b') fail('watchNamespaces must give one Role per watched namespace', roles.map((r) => r.metadata));
  const namespaced = strip(x.rules.filter((r) => !r.clusterScoped));
  for (const r of roles) if (!isDeepStrictEqual(r.rules, namespaced)) fail(`Role in ${r.metadata.namespace} does not grant exactly the namespaced rules`, r.rules);
  const clusterScoped = strip(x.rules.filter((r) => r.clusterScoped));
  const nsClusterRoles = find('namespaced', 'ClusterRole');
  if (clusterScoped.length ? !isDeepStrictEqual(nsClusterRoles[0]?.rules, clusterScoped) : nsClusterRoles.length) fail('namespaced installs need a ClusterRole for exactly the cluster-scoped rules', nsClusterRoles);

  const [dep] = find('defaults', 'Deployment');
  const pod = dep.spec.template.spec;
  const c = pod.containers[0];
  if (c.image !== x.image) fail(`image should be ${x.image}`, c.image);
  for (const arg of ['--leader-elect', `--leader-election-namespace=${ns}`, `--leader-election-id=${x.leaseName}`, '--metrics-bind-address=:8080', '--health-probe-bind-address=:8081']) {
    if (!c.args.includes(arg)) fail(`missing ${arg}`, c.args);
  }
  const sc = c.securityContext;
  if (!(sc.readOnlyRootFilesystem && sc.allowPrivilegeEscalation === false && sc.runAsNonRoot && sc.capabilities?.drop?.includes('ALL'))) fail('the container must be hardened', sc);
  if (!(pod.securityContext?.runAsNonRoot && pod.securityContext?.seccompProfile?.type === 'RuntimeDefault')) fail('the pod must be hardened', pod.securityContext);
  if (c.readinessProbe?.httpGet?.path !== '/readyz' || c.livenessProbe?.httpGet?.path !== '/healthz') fail('probes must use /readyz and /healthz', c);
  if (!c.resources?.requests || !c.resources?.limits) fail('requests and limits are required', c.resources);
  const env = Object.fromEntries(find('namespaced', 'Deployment')[0].spec.template.spec.containers[0].env.map((e: any) => [e.name, e.value]));
  if (env.WATCH_NAMESPACE !== 'team-a,team-b') fail('WATCH_NAMESPACE must follow watchNamespaces', env);
  const [lease] = find('defaults', 'Role', `opkit-${x.chartDir.split('/').pop()}-leader-election`);
  if (!isDeepStrictEqual(lease?.rules?.[0], { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: [x.leaseName], verbs: ['get', 'update', 'patch'] })) fail('the leader-election Role must be scoped to the lease', lease);

  // The release owns the Lease, so uninstalling leaves none behind.
  const [leaseObj] = find('defaults', 'Lease', x.leaseName);
  if (leaseObj?.metadata.namespace !== ns) fail('the chart must render the leader-election Lease in the leader-election namespace', leaseObj);
  if (find('minimal', 'Lease').length) fail('without leader election the chart must not render a Lease');

  for (const crd of find('defaults', 'CustomResourceDefinition')) if (crd.metadata.annotations?.['helm.sh/resource-policy'] !== 'keep') fail(`CRD ${crd.metadata.name} must be kept on uninstall`);
  for (const kind of ['CustomResourceDefinition', 'Service', 'ServiceAccount']) if (find('minimal', kind).length) fail(`the minimal variant must not render a ${kind}`);

  for (const [values, expected] of [
    [{ replicaCont: 2 }, /additional properties 'replicaCont' not allowed/],
    [{ logFormat: 'xml' }, /logFormat/],
    [{ replicaCount: 2, leaderElection: { enabled: false } }, /replicaCount > 1 needs leaderElection.enabled=true/],
  ] as const) {
    const err = await helmTemplate(x.chartDir, { values }).then(() => undefined, (e: Error) => e);
    if (!err || !expected.test(err.message)) fail(`values ${JSON.stringify(values)} must be refused with ${expected}`, err?.message);
  }
  return rendered;
}
