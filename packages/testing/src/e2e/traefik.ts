import { parse as parseYaml } from 'yaml';
import { gatewayApiCrds } from '../helm/published-crds.js';
import type { E2ECluster } from './cluster.js';

export interface InClusterIngress {
  /** The IngressClass whose Ingresses it serves. */
  ingressClass: string;
  /** The GatewayClass whose Gateways it serves (Gateway API v1.4, standard channel). */
  gatewayClass: string;
  /**
   * Traefik binds a Gateway listener to the entry point of the same port: a Gateway's HTTP
   * listeners must say 8000 and its HTTPS listeners 8443, which its Service serves as 80 and 443.
   */
  gatewayPorts: { http: number; https: number };
  /** The ClusterIP of its Service: port 80 serves every Ingress of the class and every HTTP listener, 443 every HTTPS listener. */
  address: string;
  /** That Service, for a port-forward from this host. */
  service: { namespace: string; name: string };
  uninstall(): Promise<void>;
}

/**
 * The Gateway API's standard CRDs: Traefik's provider waits, silently, until every one of them is
 * served. ListenerSet too (Traefik 3.6 serves none, but the operator's ListenerSet controllers
 * watch them: the chart's flag and RBAC run in the kind mode).
 */
const GATEWAY_KINDS = ['gatewayclasses', 'gateways', 'httproutes', 'grpcroutes', 'referencegrants', 'backendtlspolicies', 'listenersets'];

const NS = 'traefik';

/**
 * Traefik as the cluster's ingress controller and Gateway API implementation (kind mode), from the
 * `traefik` workload image: its Kubernetes Ingress provider serves the Ingresses of IngressClass
 * `traefik` on its Service's port 80, and its Gateway provider the Gateways of GatewayClass
 * `traefik` (the Gateway API's standard CRDs are installed first, from the pinned module).
 * Traefik because it is one Go binary (built here from its module where Docker Hub cannot be
 * reached) with a full Ingress implementation; ingress-nginx needs OpenResty. Installed from plain
 * manifests: its chart repository may be out of reach too.
 */
export async function installTraefik(cluster: E2ECluster): Promise<InClusterIngress> {
  const image = cluster.images.traefik;
  if (!image) throw new Error("installTraefik needs the `traefik` workload image (startE2ECluster(..., { workloads: ['traefik'] }))");
  const labels = { 'app.kubernetes.io/name': 'traefik' };
  await cluster.kubectl(['apply', '--server-side', '-f', '-'], {
    input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: (await gatewayApiCrds(GATEWAY_KINDS)).map((y) => parseYaml(y) as object) }),
  });
  await cluster.kubectl(['wait', '--for=condition=Established', '--timeout=60s', ...GATEWAY_KINDS.map((k) => `crd/${k}.gateway.networking.k8s.io`)]);
  const objects = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'traefik', namespace: NS } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'opkit-e2e-traefik' },
      rules: [
        { apiGroups: [''], resources: ['services', 'endpoints', 'secrets', 'nodes', 'namespaces', 'configmaps'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: ['gateway.networking.k8s.io'], resources: GATEWAY_KINDS, verbs: ['get', 'list', 'watch'] },
        { apiGroups: ['gateway.networking.k8s.io'], resources: GATEWAY_KINDS.map((k) => `${k}/status`), verbs: ['update', 'patch'] },
        { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: ['networking.k8s.io'], resources: ['ingresses', 'ingressclasses'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: ['networking.k8s.io'], resources: ['ingresses/status'], verbs: ['update'] },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'opkit-e2e-traefik' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'opkit-e2e-traefik' },
      subjects: [{ kind: 'ServiceAccount', name: 'traefik', namespace: NS }],
    },
    { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name: 'traefik' }, spec: { controller: 'traefik.io/ingress-controller' } },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: 'traefik' },
      spec: { controllerName: 'traefik.io/gateway-controller' },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'traefik', namespace: NS },
      spec: {
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: 'traefik',
            securityContext: { runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, seccompProfile: { type: 'RuntimeDefault' } },
            containers: [
              {
                name: 'traefik',
                image,
                imagePullPolicy: 'IfNotPresent',
                command: ['/usr/local/bin/traefik'],
                args: [
                  '--entryPoints.web.address=:8000',
                  '--entryPoints.websecure.address=:8443',
                  '--entryPoints.traefik.address=:9000',
                  '--ping=true',
                  '--ping.entryPoint=traefik',
                  '--providers.kubernetesingress=true',
                  '--providers.kubernetesingress.ingressclass=traefik',
                  '--providers.kubernetesgateway=true',
                  // The address Gateways report in their status (the Service's name: its ClusterIP is not known yet).
                  `--providers.kubernetesgateway.statusaddress.hostname=traefik.${NS}.svc`,
                  '--global.checknewversion=false',
                  '--global.sendanonymoususage=false',
                  '--log.level=INFO',
                ],
                ports: [
                  { name: 'web', containerPort: 8000 },
                  { name: 'websecure', containerPort: 8443 },
                  { name: 'ping', containerPort: 9000 },
                ],
                readinessProbe: { httpGet: { path: '/ping', port: 'ping' as never }, periodSeconds: 2 },
                securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
              },
            ],
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'traefik', namespace: NS },
      spec: {
        selector: labels,
        ports: [
          { name: 'web', port: 80, targetPort: 'web' },
          { name: 'websecure', port: 443, targetPort: 'websecure' },
        ],
      },
    },
  ];
  const list = JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects });
  await cluster.kubectl(['apply', '-f', '-'], { input: list });
  await cluster.kubectl(['rollout', 'status', 'deployment/traefik', '-n', NS, '--timeout=180s']);
  const address = (await cluster.kubectl(['get', 'service', 'traefik', '-n', NS, '-o', 'jsonpath={.spec.clusterIP}'])).stdout.trim();
  return {
    ingressClass: 'traefik',
    gatewayClass: 'traefik',
    gatewayPorts: { http: 8000, https: 8443 },
    address,
    service: { namespace: NS, name: 'traefik' },
    async uninstall() {
      await cluster.kubectl(['delete', '-f', '-', '--wait=false', '--ignore-not-found'], { input: list, check: false });
    },
  };
}
