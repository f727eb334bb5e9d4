import { CERT_APIS, type CertApi } from './api/index.js';

/** Settings of the cert operator, from its flags. */
export interface CertOperatorConfig {
  /** The API the operator serves: its resources, annotations and labels (`--api-mode`; api/groups.ts). */
  api: CertApi;
  /** Where ClusterIssuers' Secrets live (CA pairs, ACME account keys). */
  clusterResourceNamespace: string;
  /** Approve CertificateRequests for our issuers automatically (cert-manager's default). */
  autoApprove: boolean;
  /** Give issued Secrets an owner reference to their Certificate (deleted with it). Off by default, as cert-manager. */
  certificateOwnerRef: boolean;
  /** Image of the HTTP-01 solver pods. */
  acmeSolverImage: string;
  /** At most this many ACME challenges are processed at once. */
  maxConcurrentChallenges: number;
  /** HTTP-01 self-check: consecutive passes required, pause between checks, and the overall bound. */
  selfCheck: { requiredPasses: number; intervalMs: number; timeoutMs: number };
  /** DNS servers (host:port) the self-check resolves challenge names with; empty: the system's. */
  selfCheckNameservers: string[];
  /** The port HTTP-01 is validated on: 80, except with a test CA such as Pebble (its httpPort). */
  selfCheckPort: number;
  /** Solve with Gateway API HTTPRoutes (needs the Gateway API CRDs installed). */
  enableGatewayAPI: boolean;
  /**
   * Gateway API self-service: annotated HTTPRoutes get a Certificate and a listener on a Gateway
   * whose owner offers it (controllers/shims/self-service.ts). Needs the Gateway API's standard
   * CRDs, ReferenceGrant among them.
   */
  gatewaySelfService: boolean;
  /**
   * With self-service, ListenerSets (Gateway API v1.5): a route's listeners go in a ListenerSet of
   * its own where its Gateway admits them, and an annotated ListenerSet gets its Certificates
   * (shim/listener-set.ts). Needs the ListenerSet CRD.
   */
  gatewayListenerSets: boolean;
  /** Run the ACME Order and Challenge controllers (needs their CRDs). */
  acme: boolean;
  /** DNS-01: the resolvers for zone lookups and the self-check, and how often the self-check runs. */
  dns01: { recursiveNameservers: string[]; recursiveOnly: boolean; checkIntervalMs: number };
  /** ingress-shim: Certificates for annotated Ingresses. */
  ingressShim: boolean;
  /** The shims read this operator's annotations only, leaving `cert-manager.io/*` to a cert-manager that still runs. */
  shimIgnoreCertManagerAnnotations: boolean;
  /** The issuer for Ingresses annotated only kubernetes.io/tls-acme: "true" (cert-manager's --default-issuer-*). */
  defaultIssuer?: { name: string; kind: string; group?: string };
}

/** The defaults; `clusterResourceNamespace` is the operator's own namespace when it runs in a pod. */
export const defaultConfig = ({ clusterResourceNamespace, ...overrides }: Partial<CertOperatorConfig> = {}): CertOperatorConfig => ({
  api: CERT_APIS.opkit,
  clusterResourceNamespace: clusterResourceNamespace || 'opkit-system',
  autoApprove: true,
  certificateOwnerRef: false,
  acmeSolverImage: 'opkit/acme-solver:0.1.0',
  maxConcurrentChallenges: 60,
  selfCheck: { requiredPasses: 3, intervalMs: 2_000, timeoutMs: 10 * 60_000 },
  selfCheckNameservers: [],
  selfCheckPort: 80,
  enableGatewayAPI: false,
  gatewaySelfService: false,
  gatewayListenerSets: false,
  acme: true,
  ingressShim: true,
  shimIgnoreCertManagerAnnotations: false,
  dns01: { recursiveNameservers: [], recursiveOnly: false, checkIntervalMs: 10_000 },
  ...overrides,
});

/** How the shims read annotations, from the operator's settings. */
export const shimOptions = (cfg: CertOperatorConfig) => ({
  defaultIssuer: cfg.defaultIssuer,
  ignoreCertManagerAnnotations: cfg.shimIgnoreCertManagerAnnotations,
});
