import { isDeepStrictEqual } from 'node:util';
import type { ControlPlane } from '../control-plane/control-plane.js';
import { helmTemplate, kubectlApply, mergeValues } from './chart.js';
import { syncChartReadme } from './chart-docs.js';
import { explainUndescribed } from './explain.js';
import { prometheusOperatorCrds } from './published-crds.js';
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
  /** Values under every variant (an install option that changes what the chart is, e.g. the cert operator's apiMode). */
  values?: Record<string, unknown>;
  /** The chart's own toggles, added to the "everything" variant (every toggle on). */
  everything?: Record<string, unknown>;
  /** TCP ports the operator reaches beyond DNS and the API server (the cert operator: ACME over 443, the HTTP-01 self-check over 80). */
  egressPorts?: number[];
}

const DIGEST = `sha256:${'0123456789abcdef'.repeat(4)}`;

/** Every toggle the shared chart parts have, on; with cert-manager-style globals. */
export const EVERYTHING_ON = {
  global: {
    imageRegistry: 'registry.example.com',
    imagePullSecrets: [{ name: 'global-pull' }],
    commonLabels: { 'example.com/team': 'platform' },
    leaderElection: { namespace: 'kube-system' },
    logLevel: 2,
  },
  image: { digest: DIGEST },
  imagePullSecrets: [{ name: 'pull' }],
  commonLabels: { 'example.com/owner': 'platform' },
  commonAnnotations: { 'example.com/note': 'every toggle on' },
  replicaCount: 2,
  strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
  podDisruptionBudget: { enabled: true, minAvailable: 1 },
  topologySpreadConstraints: [
    {
      maxSkew: 1,
      topologyKey: 'kubernetes.io/hostname',
      whenUnsatisfiable: 'ScheduleAnyway',
      labelSelector: { matchLabels: { 'app.kubernetes.io/instance': '{{ .Release.Name }}' } },
    },
  ],
  networkPolicy: { enabled: true, metricsFrom: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }] },
  metrics: { serviceMonitor: { enabled: true, force: true, labels: { release: 'prometheus' } } },
  probes: { liveness: { periodSeconds: 30 }, readiness: { periodSeconds: 5 } },
  logTimeEncoding: 'iso8601',
  logLevelEncoding: 'string',
  tests: { enabled: true },
};

const fail = (msg: string, detail?: unknown): never => {
  throw new Error(detail === undefined ? msg : `${msg}\n${JSON.stringify(detail, null, 2)}`);
};

/** What each set of values rendered: the standard sets always, an operator's own (`variants`) by name. */
export type RenderedVariants = Record<'defaults' | 'namespaced' | 'minimal' | 'everything' | 'scaledToZero', RenderedObject[]> &
  Partial<Record<string, RenderedObject[]>>;

/**
 * The invariants every opkit operator chart holds, checked on what `helm template` renders and the
 * API server accepts (server-side dry-run): RBAC is exactly the controllers' rules (cluster-wide,
 * or Roles per watched namespace), the Deployment is hardened and probed with leader election on,
 * CRDs are kept on uninstall, and values outside the schema are refused.
 */
export async function verifyOperatorChart(plane: ControlPlane, x: OperatorChartExpectations): Promise<RenderedVariants> {
  const ns = 'opkit-system';
  // The ServiceMonitor and PrometheusRule are dry-run too: the server learns their kinds first.
  await kubectlApply(plane.kubeconfigPath, (await prometheusOperatorCrds()).join('\n---\n'));
  const variants: Record<string, Record<string, unknown>> = {
    defaults: {},
    namespaced: { watchNamespaces: ['team-a', 'team-b'], replicaCount: 2 },
    minimal: {
      crds: { enabled: false },
      metrics: { enabled: false },
      leaderElection: { enabled: false },
      serviceAccount: { create: false, name: 'existing' },
    },
    everything: mergeValues(EVERYTHING_ON, x.everything ?? {}),
    scaledToZero: { replicaCount: 0 },
    ...x.variants,
  };
  const rendered = (await verifyChart(
    plane,
    x.chartDir,
    Object.fromEntries(Object.entries(variants).map(([name, values]) => [name, mergeValues(x.values ?? {}, values)])),
    ns,
  )) as RenderedVariants;
  const variant = (name: string) => {
    const objects = rendered[name];
    if (!objects) throw new Error(`the chart was not rendered with the values "${name}"`);
    return objects;
  };
  const find = (name: string, kind: string, objectName?: string) =>
    variant(name).filter((o) => o.kind === kind && (!objectName || o.metadata.name === objectName)) as any[];
  const strip = (rules: OperatorChartExpectations['rules']) => rules.map(({ clusterScoped: _c, ...r }) => r);

  const chartName = x.chartDir.split('/').pop()!;
  const fullname = `opkit-${chartName}`;
  const [clusterRole] = find('defaults', 'ClusterRole', fullname);
  if (!isDeepStrictEqual(clusterRole?.rules, strip(x.rules)))
    fail('the ClusterRole does not grant exactly the declared rules', { rendered: clusterRole?.rules, declared: strip(x.rules) });
  // The leader-election Role, and a chart's Role for its own namespace's resources, are not per watched namespace.
  const roles = find('namespaced', 'Role').filter(
    (r) => !['-leader-election', '-cluster-resources', '-cert-manager-lease', '-webhook-certificates'].some((suffix) => r.metadata.name.endsWith(suffix)),
  );
  if (
    roles
      .map((r) => r.metadata.namespace)
      .sort()
      .join() !== 'team-a,team-b'
  )
    fail(
      'watchNamespaces must give one Role per watched namespace',
      roles.map((r) => r.metadata),
    );
  const namespaced = strip(x.rules.filter((r) => !r.clusterScoped));
  for (const r of roles)
    if (!isDeepStrictEqual(r.rules, namespaced)) fail(`Role in ${r.metadata.namespace} does not grant exactly the namespaced rules`, r.rules);
  const clusterScoped = strip(x.rules.filter((r) => r.clusterScoped));
  const nsClusterRoles = find('namespaced', 'ClusterRole').filter((r) => r.metadata.name.endsWith('-cluster'));
  if (clusterScoped.length ? !isDeepStrictEqual(nsClusterRoles[0]?.rules, clusterScoped) : nsClusterRoles.length)
    fail('namespaced installs need a ClusterRole for exactly the cluster-scoped rules', nsClusterRoles);

  const [dep] = find('defaults', 'Deployment');
  const pod = dep.spec.template.spec;
  const c = pod.containers[0];
  if (c.image !== x.image) fail(`image should be ${x.image}`, c.image);
  for (const arg of [
    '--leader-elect',
    `--leader-election-namespace=${ns}`,
    `--leader-election-id=${x.leaseName}`,
    '--metrics-bind-address=:8443',
    '--metrics-secure',
    '--health-probe-bind-address=:8081',
  ]) {
    if (!c.args.includes(arg)) fail(`missing ${arg}`, c.args);
  }
  const sc = c.securityContext;
  if (!(sc.readOnlyRootFilesystem && sc.allowPrivilegeEscalation === false && sc.runAsNonRoot && sc.capabilities?.drop?.includes('ALL')))
    fail('the container must be hardened', sc);
  if (!(pod.securityContext?.runAsNonRoot && pod.securityContext?.seccompProfile?.type === 'RuntimeDefault'))
    fail('the pod must be hardened', pod.securityContext);
  if (c.readinessProbe?.httpGet?.path !== '/readyz' || c.livenessProbe?.httpGet?.path !== '/healthz') fail('probes must use /readyz and /healthz', c);
  if (!c.resources?.requests || !c.resources?.limits) fail('requests and limits are required', c.resources);
  const env = Object.fromEntries(find('namespaced', 'Deployment')[0].spec.template.spec.containers[0].env.map((e: any) => [e.name, e.value]));
  if (env.WATCH_NAMESPACE !== 'team-a,team-b') fail('WATCH_NAMESPACE must follow watchNamespaces', env);
  const [lease] = find('defaults', 'Role', `opkit-${x.chartDir.split('/').pop()}-leader-election`);
  if (
    !isDeepStrictEqual(lease?.rules?.[0], {
      apiGroups: ['coordination.k8s.io'],
      resources: ['leases'],
      resourceNames: [x.leaseName],
      verbs: ['get', 'update', 'patch'],
    })
  )
    fail('the leader-election Role must be scoped to the lease', lease);

  // The release owns the Lease, so uninstalling leaves none behind.
  const [leaseObj] = find('defaults', 'Lease', x.leaseName);
  if (leaseObj?.metadata.namespace !== ns) fail('the chart must render the leader-election Lease in the leader-election namespace', leaseObj);
  if (find('minimal', 'Lease').length) fail('without leader election the chart must not render a Lease');

  for (const crd of find('defaults', 'CustomResourceDefinition'))
    if (crd.metadata.annotations?.['helm.sh/resource-policy'] !== 'keep') fail(`CRD ${crd.metadata.name} must be kept on uninstall`);
  // (The webhook Service stays: the API server needs it whatever the other toggles say.)
  for (const kind of ['CustomResourceDefinition', 'Service', 'ServiceAccount'])
    if (find('minimal', kind).filter((o) => !o.metadata.name.endsWith('-webhook')).length) fail(`the minimal variant must not render a ${kind}`);

  // Secured metrics by default: HTTPS, TokenReview and SubjectAccessReview allowed to the operator, a reader role to bind.
  const auth = find('defaults', 'ClusterRole', `${fullname}-metrics-auth`)[0];
  if (
    !isDeepStrictEqual(auth?.rules, [
      { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
      { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
    ])
  )
    fail('secure metrics need TokenReview and SubjectAccessReview create, and nothing more', auth);
  const reader = find('defaults', 'ClusterRole', `${fullname}-metrics-reader`)[0];
  if (!isDeepStrictEqual(reader?.rules, [{ nonResourceURLs: ['/metrics', '/debug/queue'], verbs: ['get'] }]))
    fail('the metrics reader role must grant GET on /metrics and /debug/queue only', reader);
  if (find('minimal', 'ClusterRole', `${fullname}-metrics-auth`).length) fail('without metrics, no metrics RBAC');

  // Webhooks, for charts that have them: a Service, the webhook port open, and no webhook
  // configuration at zero replicas (nothing would answer it).
  const webhookService = find('defaults', 'Service', `${fullname}-webhook`)[0];
  if (webhookService) {
    if (webhookService.spec.ports[0].port !== 443 || webhookService.spec.ports[0].targetPort !== 'webhook')
      fail('the webhook Service must send 443 to the webhook port', webhookService.spec);
    for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']) {
      if (find('scaledToZero', kind).length) fail(`with replicaCount 0 the chart must not render a ${kind}`);
      for (const c of find('defaults', kind))
        for (const w of c.webhooks)
          if (w.clientConfig.service?.name !== `${fullname}-webhook` || w.timeoutSeconds > 10)
            fail(`${kind} ${w.name} must call the webhook Service with a short timeout`, w);
    }
  }

  // Defaults: one replica, so no PDB (it would block every drain); no NetworkPolicy; the helm test.
  for (const kind of ['PodDisruptionBudget', 'NetworkPolicy', 'ServiceMonitor', 'PrometheusRule'])
    if (find('defaults', kind).length) fail(`the defaults must not render a ${kind}`);
  const [testPod] = find('defaults', 'Pod');
  if (testPod?.metadata.annotations?.['helm.sh/hook'] !== 'test') fail('the defaults must render the helm test Pod', testPod?.metadata);

  // Every toggle on.
  const all = variant('everything');
  const [depAll] = find('everything', 'Deployment');
  const podAll = depAll.spec.template.spec;
  const imageAll = `registry.example.com/${x.image.split(':')[0]}@${DIGEST}`;
  if (podAll.containers[0].image !== imageAll) fail(`with a digest and global.imageRegistry the image should be ${imageAll}`, podAll.containers[0].image);
  if (podAll.imagePullSecrets?.map((p: { name: string }) => p.name).join() !== 'pull,global-pull')
    fail('imagePullSecrets and global.imagePullSecrets must both be used', podAll.imagePullSecrets);
  for (const o of all) {
    const where = `${o.kind} ${o.metadata.name}`;
    if (o.metadata.labels?.['example.com/owner'] !== 'platform' || o.metadata.labels['example.com/team'] !== 'platform')
      fail(`${where}: commonLabels and global.commonLabels on every object`, o.metadata.labels);
    if (o.metadata.annotations?.['example.com/note'] !== 'every toggle on') fail(`${where}: commonAnnotations on every object`, o.metadata.annotations);
  }
  const expectKind = (kind: string) => find('everything', kind)[0] ?? fail(`every toggle on must render a ${kind}`);
  const pdb = expectKind('PodDisruptionBudget');
  if (pdb.spec.minAvailable !== 1 || pdb.spec.selector.matchLabels['app.kubernetes.io/instance'] !== 'opkit')
    fail('the PDB must select the operator pods', pdb.spec);
  const np = expectKind('NetworkPolicy');
  if (!isDeepStrictEqual(np.spec.policyTypes, ['Ingress', 'Egress'])) fail('the NetworkPolicy must govern ingress and egress', np.spec);
  if (!np.spec.egress.some((r: { ports?: { port: number }[] }) => r.ports?.some((p) => p.port === 53)))
    fail('the NetworkPolicy must allow DNS', np.spec.egress);
  if (!np.spec.egress.some((r: { ports?: { port: number }[] }) => r.ports?.some((p) => p.port === 6443)))
    fail('the NetworkPolicy must allow the API server', np.spec.egress);
  for (const port of x.egressPorts ?? []) {
    if (!np.spec.egress.some((r: { ports?: { port: number; protocol: string }[] }) => r.ports?.some((p) => p.port === port && p.protocol === 'TCP')))
      fail(`the NetworkPolicy must allow the operator's egress to TCP ${port}`, np.spec.egress);
  }
  // Ingress by the container's named ports: Prometheus to the metrics port, the kubelet to the probes.
  const named = new Map<string, number>(podAll.containers[0].ports.map((p: { name: string; containerPort: number }) => [p.name, p.containerPort]));
  for (const port of ['metrics', 'probes']) {
    if (!named.has(port)) fail(`the container must name its ${port} port (the NetworkPolicy admits it by name)`, podAll.containers[0].ports);
    if (!np.spec.ingress.some((r: { ports?: { port: string | number }[] }) => r.ports?.some((p) => p.port === port || p.port === named.get(port))))
      fail(`the NetworkPolicy must admit the ${port} port`, np.spec.ingress);
  }
  const sm = expectKind('ServiceMonitor');
  if (sm.spec.endpoints[0].scheme !== 'https' || !sm.spec.endpoints[0].bearerTokenFile)
    fail('the ServiceMonitor must scrape over HTTPS with a bearer token', sm.spec.endpoints);
  if (
    find('everything', 'Service', `${fullname}-webhook`).length &&
    !np.spec.ingress.some((r: { ports?: { port: string | number }[] }) => r.ports?.some((p) => p.port === 'webhook'))
  )
    fail('the NetworkPolicy must admit the API server to the webhook port', np.spec.ingress);
  if (podAll.topologySpreadConstraints?.[0]?.labelSelector?.matchLabels?.['app.kubernetes.io/instance'] !== 'opkit')
    fail('topologySpreadConstraints are templated (tpl)', podAll.topologySpreadConstraints);
  if (depAll.spec.strategy?.rollingUpdate?.maxUnavailable !== 0) fail('the strategy must be the one given', depAll.spec.strategy);
  const argsAll: string[] = podAll.containers[0].args;
  for (const a of ['--log-time-encoding=iso8601', '--log-level-encoding=string']) if (!argsAll.includes(a)) fail(`missing ${a}`, argsAll);
  if (podAll.containers[0].livenessProbe.periodSeconds !== 30 || podAll.containers[0].readinessProbe.periodSeconds !== 5)
    fail('probe settings come from values', podAll.containers[0]);

  const chart = chartName;
  if (!(await syncChartReadme(x.chartDir, 'check'))) fail(`charts/${chart}/README.md is stale: run \`npx nx run @opkit/${chart}:chart-docs\``);

  // kubectl explain, asked of the API server that now serves the CRDs: every field described.
  const undescribed: string[] = [];
  for (const crd of find('defaults', 'CustomResourceDefinition'))
    undescribed.push(...(await explainUndescribed(plane, crd)).map((f) => `${crd.metadata.name} ${f}`));
  if (undescribed.length) fail('kubectl explain shows <no description> for', undescribed);

  for (const [values, expected] of [
    [{ replicaCont: 2 }, /additional properties 'replicaCont' not allowed/],
    [{ logFormat: 'xml' }, /logFormat/],
    [{ replicaCount: 2, leaderElection: { enabled: false } }, /replicaCount > 1 needs leaderElection.enabled=true/],
  ] as const) {
    const err = await helmTemplate(x.chartDir, { values }).then(
      () => undefined,
      (e: Error) => e,
    );
    if (!err || !expected.test(err.message)) fail(`values ${JSON.stringify(values)} must be refused with ${expected}`, err?.message);
  }
  return rendered;
}
