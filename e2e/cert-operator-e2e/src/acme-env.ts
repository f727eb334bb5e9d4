import { createCertificateAuthority, installTraefik, startLocalAcme, waitFor, type E2ECluster, type WorkspaceApp } from '@opkit/testing';

/** An ACME server the cluster's solvers can be validated by, and what the chart needs to use it. */
export interface AcmeEnv {
  directoryUrl: string;
  /** The CA of the ACME server's TLS certificate (the issuer's caBundle). */
  tlsCaPem: string;
  /** The ingress class solver Ingresses must use to be served. */
  ingressClass: string;
  /**
   * The Gateway API implementation in the cluster (kind: Traefik), whose HTTP listeners the ACME
   * server's DNS also reaches; its HTTPS port is reached from this host through `service`.
   */
  gateway?: { className: string; ports: { http: number; https: number }; service: { namespace: string; name: string } };
  /** Chart values that point the self-check where the ACME server's DNS points. */
  chartValues: Record<string, unknown>;
  root(): Promise<string>;
  stop(): Promise<void>;
}

/** local: Pebble on this machine and the ingress stand-in (see startLocalAcme). */
export async function localAcme(cluster: E2ECluster, solver: WorkspaceApp): Promise<AcmeEnv> {
  const local = await startLocalAcme(cluster.kubeConfig, { [solver.image.repository]: solver.local });
  return {
    directoryUrl: local.pebble.directoryUrl,
    tlsCaPem: local.pebble.tlsCaPem,
    ingressClass: local.ingressClass,
    chartValues: local.chartValues,
    root: () => local.pebble.root(),
    stop: () => local.stop(),
  };
}

/**
 * kind: Traefik as the ingress controller and Pebble with pebble-challtestsrv in the cluster.
 * challtestsrv answers every name with the ingress controller's address, so Pebble's validation
 * and the operator's self-check both go through the real ingress to the solver pods.
 */
export async function kindAcme(cluster: E2ECluster): Promise<AcmeEnv> {
  const kubectl = (args: string[], input?: string) => cluster.kubectl(args, input ? { input } : {});
  const pebbleImage = cluster.images.pebble;
  if (!pebbleImage) throw new Error('the kind cluster was started without the pebble image');
  const ingress = await installTraefik(cluster);
  const ingressIP = ingress.address;

  const ns = 'pebble';
  await kubectl(['create', 'namespace', ns]).catch(() => undefined);
  const ca = await createCertificateAuthority('opkit e2e pebble TLS CA', 30);
  const serving = await ca.issue({ commonName: 'pebble', usage: 'server', dnsNames: ['pebble', `pebble.${ns}.svc`, `pebble.${ns}.svc.cluster.local`] });
  const config = {
    pebble: {
      listenAddress: '0.0.0.0:14000',
      managementListenAddress: '0.0.0.0:15000',
      certificate: '/tls/tls.crt',
      privateKey: '/tls/tls.key',
      httpPort: 80,
      tlsPort: 443,
      ocspResponderURL: '',
      externalAccountBindingRequired: false,
      retryAfter: { authz: 1, order: 1 },
    },
  };
  const manifests = [
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'pebble-tls', namespace: ns },
      type: 'kubernetes.io/tls',
      stringData: { 'tls.crt': serving.cert, 'tls.key': serving.key },
    },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pebble', namespace: ns }, data: { 'pebble.json': JSON.stringify(config) } },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'pebble', namespace: ns },
      spec: {
        selector: { matchLabels: { app: 'pebble' } },
        template: {
          metadata: { labels: { app: 'pebble' } },
          spec: {
            securityContext: { runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: 'RuntimeDefault' } },
            containers: [
              {
                name: 'pebble',
                image: pebbleImage,
                imagePullPolicy: 'IfNotPresent',
                command: ['/usr/local/bin/pebble', '-config', '/config/pebble.json', '-dnsserver', '127.0.0.1:8053'],
                env: [
                  { name: 'PEBBLE_VA_NOSLEEP', value: '1' },
                  { name: 'PEBBLE_WFE_NONCEREJECT', value: '0' },
                  { name: 'PEBBLE_AUTHZREUSE', value: '0' },
                ],
                ports: [{ containerPort: 14000 }, { containerPort: 15000 }],
                volumeMounts: [
                  { name: 'config', mountPath: '/config' },
                  { name: 'tls', mountPath: '/tls' },
                ],
              },
              {
                name: 'challtestsrv',
                image: pebbleImage,
                imagePullPolicy: 'IfNotPresent',
                command: [
                  '/usr/local/bin/pebble-challtestsrv',
                  '-defaultIPv4',
                  ingressIP,
                  '-defaultIPv6',
                  '',
                  '-dnsserver',
                  ':8053',
                  '-http01',
                  '',
                  '-https01',
                  '',
                  '-tlsalpn01',
                  '',
                  '-doh',
                  '',
                  '-management',
                  ':8055',
                ],
                ports: [
                  { containerPort: 8053, protocol: 'UDP' },
                  { containerPort: 8053, protocol: 'TCP' },
                ],
              },
            ],
            volumes: [
              { name: 'config', configMap: { name: 'pebble' } },
              { name: 'tls', secret: { secretName: 'pebble-tls' } },
            ],
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'pebble', namespace: ns },
      spec: {
        selector: { app: 'pebble' },
        ports: [
          { name: 'acme', port: 14000 },
          { name: 'mgmt', port: 15000 },
          { name: 'dns', port: 8053, protocol: 'UDP' },
          { name: 'dns-tcp', port: 8053, protocol: 'TCP' },
        ],
      },
    },
  ];
  await kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: manifests }));
  await kubectl(['rollout', 'status', 'deployment/pebble', '-n', ns, '--timeout=180s']);
  const dnsIP = (await kubectl(['get', 'service', 'pebble', '-n', ns, '-o', 'jsonpath={.spec.clusterIP}'])).stdout.trim();
  return {
    directoryUrl: `https://pebble.${ns}.svc:14000/dir`,
    tlsCaPem: ca.cert,
    ingressClass: ingress.ingressClass,
    gateway: { className: ingress.gatewayClass, ports: ingress.gatewayPorts, service: ingress.service },
    chartValues: { acme: { selfCheck: { nameservers: [`${dnsIP}:8053`] } } },
    // The API server's service proxy reaches Pebble's management port from outside the cluster.
    root: () =>
      waitFor("Pebble's root", async () => (await kubectl(['get', '--raw', `/api/v1/namespaces/${ns}/services/https:pebble:mgmt/proxy/roots/0`])).stdout, {
        timeoutMs: 30_000,
      }),
    async stop() {
      await kubectl(['delete', 'namespace', ns, '--wait=false']).catch(() => undefined);
      await ingress.uninstall();
    },
  };
}
