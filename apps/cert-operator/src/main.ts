import { runOperator } from '@opkit/runtime';
import { defaultConfig } from './config.js';
import { addCertificateControllers } from './controllers/index.js';
import { parseDuration } from './pki/duration.js';

void runOperator({
  name: 'cert-operator',
  description: 'issues and renews X.509 certificates: Issuer, ClusterIssuer, Certificate, CertificateRequest (cert.opkit.dev/v1)',
  flags: {
    'cluster-resource-namespace': { type: 'string' },
    'disable-auto-approval': { type: 'boolean', default: false },
    'enable-certificate-owner-ref': { type: 'boolean', default: false },
    'acme-http01-solver-image': { type: 'string' },
    'max-concurrent-challenges': { type: 'string' },
    'acme-http01-solver-nameservers': { type: 'string' },
    'acme-http01-self-check-port': { type: 'string' },
    'acme-http01-self-check-timeout': { type: 'string' },
    'enable-gateway-api': { type: 'boolean', default: false },
  },
  flagHelp: `  --cluster-resource-namespace <ns>      where ClusterIssuers' Secrets live (default: POD_NAMESPACE)
  --disable-auto-approval                leave CertificateRequests for an approver to approve or deny
  --enable-certificate-owner-ref         delete issued Secrets together with their Certificate
  --acme-http01-solver-image <image>     image of the HTTP-01 solver pods
  --max-concurrent-challenges <n>        ACME challenges processed at once (default 60)
  --acme-http01-solver-nameservers <l>   host:port DNS servers for the HTTP-01 self-check (comma-separated)
  --acme-http01-self-check-port <port>   port of the HTTP-01 self-check (default 80; test CAs may differ)
  --acme-http01-self-check-timeout <d>   give up on a self-check after this long (default 10m)
  --enable-gateway-api                   allow gatewayHTTPRoute solvers (needs the Gateway API CRDs)`,
  setup(manager, v) {
    const cfg = defaultConfig({
      ...(v['cluster-resource-namespace'] ? { clusterResourceNamespace: v['cluster-resource-namespace'] as string } : {}),
      autoApprove: !v['disable-auto-approval'],
      certificateOwnerRef: !!v['enable-certificate-owner-ref'],
      ...(v['acme-http01-solver-image'] ? { acmeSolverImage: v['acme-http01-solver-image'] as string } : {}),
      ...(v['max-concurrent-challenges'] ? { maxConcurrentChallenges: Number(v['max-concurrent-challenges']) } : {}),
      ...(v['acme-http01-solver-nameservers'] ? { selfCheckNameservers: String(v['acme-http01-solver-nameservers']).split(',').filter(Boolean) } : {}),
      ...(v['acme-http01-self-check-port'] ? { selfCheckPort: Number(v['acme-http01-self-check-port']) } : {}),
      enableGatewayAPI: !!v['enable-gateway-api'],
    });
    if (v['acme-http01-self-check-timeout']) cfg.selfCheck.timeoutMs = parseDuration(String(v['acme-http01-self-check-timeout']));
    addCertificateControllers(manager, cfg);
  },
});
