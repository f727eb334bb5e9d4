/** Settings of the cert operator, from its flags. */
export interface CertOperatorConfig {
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
}

export const defaultConfig = (overrides: Partial<CertOperatorConfig> = {}): CertOperatorConfig => ({
  clusterResourceNamespace: process.env.POD_NAMESPACE || 'opkit-system',
  autoApprove: true,
  certificateOwnerRef: false,
  acmeSolverImage: 'opkit/acme-solver:0.1.0',
  maxConcurrentChallenges: 60,
  ...overrides,
});
