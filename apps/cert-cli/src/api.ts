import { defineKind, type KubeObject } from '@opkit/runtime';

// The cert operator's kinds as the CLI reads them: just the fields it shows. The operator's own
// TypeBox schemas stay in the operator; the API server is the contract between the two.

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

type WithStatus<S, St> = KubeObject & { spec: S; status?: St & { conditions?: Condition[] } };

export type CertificateObject = WithStatus<
  { secretName: string; dnsNames?: string[]; commonName?: string; ipAddresses?: string[]; issuerRef: { name: string; kind?: string; group?: string } },
  { notBefore?: string; notAfter?: string; renewalTime?: string; revision?: number; failedIssuanceAttempts?: number; lastFailureTime?: string }
>;
export type CertificateRequestObject = WithStatus<{ request: string; issuerRef: { name: string; kind?: string }; username?: string }, { failureTime?: string }>;
export type OrderObject = WithStatus<
  { dnsNames?: string[] },
  { state?: string; reason?: string; url?: string; failedAttempts?: number; lastFailureTime?: string }
>;
export type ChallengeObject = WithStatus<
  { dnsName: string; wildcard?: boolean; type: string; token: string; solver: Record<string, unknown> },
  { state?: string; reason?: string; presented?: boolean; processing?: boolean; presentedAt?: string }
>;

const GROUP = 'cert.opkit.dev';
const ACME = 'acme.cert.opkit.dev';
export const Certificate = defineKind<CertificateObject>({ group: GROUP, version: 'v1', kind: 'Certificate', plural: 'certificates', namespaced: true });
export const CertificateRequest = defineKind<CertificateRequestObject>({
  group: GROUP,
  version: 'v1',
  kind: 'CertificateRequest',
  plural: 'certificaterequests',
  namespaced: true,
});
export const Issuer = defineKind<WithStatus<Record<string, unknown>, object>>({
  group: GROUP,
  version: 'v1',
  kind: 'Issuer',
  plural: 'issuers',
  namespaced: true,
});
export const ClusterIssuer = defineKind<WithStatus<Record<string, unknown>, object>>({
  group: GROUP,
  version: 'v1',
  kind: 'ClusterIssuer',
  plural: 'clusterissuers',
  namespaced: false,
});
export const Order = defineKind<OrderObject>({ group: ACME, version: 'v1', kind: 'Order', plural: 'orders', namespaced: true });
export const Challenge = defineKind<ChallengeObject>({ group: ACME, version: 'v1', kind: 'Challenge', plural: 'challenges', namespaced: true });

export const RENEW_ANNOTATION = `${GROUP}/renew`;
export const CERTIFICATE_NAME_ANNOTATION = `${GROUP}/certificate-name`;
export const REVISION_ANNOTATION = `${GROUP}/certificate-revision`;
