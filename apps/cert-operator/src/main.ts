import { flag, runOperator } from '@opkit/runtime';
import { API_MODES, CERT_APIS } from './api/index.js';
import { defaultConfig } from './config.js';
import { addCertificateControllers } from './controllers/index.js';
import { CERT_MANAGER_LEASE, refuseWhileCertManagerLeads } from './startup/cert-manager-lease.js';

void runOperator({
  name: 'cert-operator',
  description:
    'issues and renews X.509 certificates: Issuer, ClusterIssuer, Certificate, CertificateRequest (cert.opkit.dev/v1, or cert-manager.io/v1 in place of cert-manager)',
  flags: {
    apiMode: flag.oneOf(API_MODES, {
      default: 'opkit',
      help: 'the API served: opkit (cert.opkit.dev, acme.cert.opkit.dev) or cert-manager (cert-manager.io, acme.cert-manager.io, in place of its controller)',
    }),
    certManagerLeaseNamespace: flag.string({
      metavar: '<ns>',
      default: CERT_MANAGER_LEASE.namespace,
      help: "cert-manager mode: where cert-manager's controller holds its leader Lease (its --leader-election-namespace); no start while it is held",
    }),
    clusterResourceNamespace: flag.optionalString({ metavar: '<ns>', help: "where ClusterIssuers' Secrets live", defaultText: 'POD_NAMESPACE' }),
    disableAutoApproval: flag.boolean({ help: 'leave CertificateRequests for an approver to approve or deny' }),
    enableCertificateOwnerRef: flag.boolean({ help: 'delete issued Secrets together with their Certificate' }),
    acmeHttp01SolverImage: flag.string({ metavar: '<image>', default: defaultConfig().acmeSolverImage, help: 'image of the HTTP-01 solver pods' }),
    maxConcurrentChallenges: flag.int({ min: 1, default: defaultConfig().maxConcurrentChallenges, help: 'ACME challenges processed at once' }),
    acmeHttp01SolverNameservers: flag.list({ metavar: '<host:port,...>', help: 'DNS servers for the HTTP-01 self-check', defaultText: 'the system resolver' }),
    acmeHttp01SelfCheckPort: flag.int({
      metavar: '<port>',
      min: 1,
      max: 65_535,
      default: defaultConfig().selfCheckPort,
      help: 'port of the HTTP-01 self-check (test CAs may differ)',
    }),
    acmeHttp01SelfCheckTimeout: flag.duration({
      default: defaultConfig().selfCheck.timeoutMs,
      defaultText: '10m',
      help: 'after a self-check has failed this long, ask the ACME server to validate anyway',
    }),
    enableGatewayApi: flag.boolean({ help: 'allow gatewayHTTPRoute solvers and run gateway-shim (needs the Gateway API CRDs)' }),
    enableGatewaySelfService: flag.boolean({
      help: "certificates and listeners for annotated HTTPRoutes on Gateways whose owner offers them (needs the Gateway API's standard CRDs)",
    }),
    enableGatewayListenerSets: flag.boolean({
      help: 'with --enable-gateway-self-service: listeners in ListenerSets where the Gateway admits them, and certificates for annotated ListenerSets (needs Gateway API v1.5)',
    }),
    dns01RecursiveNameservers: flag.list({
      metavar: '<host:port,...>',
      help: 'resolvers for DNS-01 zone lookups and self-checks',
      defaultText: 'the system resolver',
    }),
    dns01RecursiveNameserversOnly: flag.boolean({ help: "check DNS-01 propagation with those resolvers only, not the zone's authoritative servers" }),
    dns01CheckRetryPeriod: flag.duration({ default: defaultConfig().dns01.checkIntervalMs, defaultText: '10s', help: 'pause between DNS-01 self-checks' }),
    disableIngressShim: flag.boolean({ help: 'do not make Certificates for annotated Ingresses' }),
    shimIgnoreCertManagerAnnotations: flag.boolean({
      help: 'ingress-shim and gateway-shim read only cert.opkit.dev/* annotations, leaving cert-manager.io/* to a cert-manager that still runs (migration)',
    }),
    defaultIssuerName: flag.optionalString({ metavar: '<name>', help: 'issuer for Ingresses annotated kubernetes.io/tls-acme: "true"', defaultText: 'none' }),
    defaultIssuerKind: flag.oneOf(['Issuer', 'ClusterIssuer'] as const, { default: 'Issuer', help: 'kind of the default issuer' }),
    defaultIssuerGroup: flag.optionalString({ metavar: '<group>', help: 'API group of the default issuer', defaultText: 'cert.opkit.dev' }),
  },
  async setup(manager, v) {
    const api = CERT_APIS[v.apiMode];
    if (v.apiMode === 'cert-manager') {
      if (v.shimIgnoreCertManagerAnnotations)
        throw new Error(
          '--shim-ignore-cert-manager-annotations is for running beside cert-manager (opkit mode); in cert-manager mode those annotations are ours',
        );
      const verdict = await refuseWhileCertManagerLeads(manager.client, { ...CERT_MANAGER_LEASE, namespace: v.certManagerLeaseNamespace }, manager.clock.now());
      manager.log.info(
        { lease: `${v.certManagerLeaseNamespace}/${CERT_MANAGER_LEASE.name}`, why: verdict.why },
        "serving cert-manager.io: cert-manager's controller does not lead",
      );
    }
    const defaults = defaultConfig({ clusterResourceNamespace: manager.environment.podNamespace });
    addCertificateControllers(manager, {
      ...defaults,
      api,
      clusterResourceNamespace: v.clusterResourceNamespace ?? defaults.clusterResourceNamespace,
      autoApprove: !v.disableAutoApproval,
      certificateOwnerRef: v.enableCertificateOwnerRef,
      acmeSolverImage: v.acmeHttp01SolverImage,
      maxConcurrentChallenges: v.maxConcurrentChallenges,
      selfCheckNameservers: v.acmeHttp01SolverNameservers,
      selfCheckPort: v.acmeHttp01SelfCheckPort,
      selfCheck: { ...defaults.selfCheck, timeoutMs: v.acmeHttp01SelfCheckTimeout },
      enableGatewayAPI: v.enableGatewayApi,
      gatewaySelfService: v.enableGatewaySelfService,
      gatewayListenerSets: v.enableGatewaySelfService && v.enableGatewayListenerSets,
      ingressShim: !v.disableIngressShim,
      shimIgnoreCertManagerAnnotations: v.shimIgnoreCertManagerAnnotations,
      dns01: { recursiveNameservers: v.dns01RecursiveNameservers, recursiveOnly: v.dns01RecursiveNameserversOnly, checkIntervalMs: v.dns01CheckRetryPeriod },
      defaultIssuer: v.defaultIssuerName
        ? { name: v.defaultIssuerName, kind: v.defaultIssuerKind, ...(v.defaultIssuerGroup ? { group: v.defaultIssuerGroup } : {}) }
        : undefined,
    });
  },
});
