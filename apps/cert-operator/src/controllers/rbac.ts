import { CoreEvent, Ingress, Namespace, Pod, rule, Secret, Service, SubjectAccessReview, type Kind, type PolicyRule } from '@opkit/runtime';
import { CertManagerCertificate } from './certificates/cert-manager-owner.js';
import { HTTPRoute } from '../acme/solver-resources.js';
import type { CertApi } from '../api/index.js';
import { Gateway } from '../shim/gateway.js';
import { ListenerSet } from '../shim/listener-set.js';
import { ReferenceGrant } from '../shim/self-service.js';

/** Exactly what the issuer, certificate and request controllers do with the API (of the mode `api` serves). */
export const certificatesRbac = ({ Issuer, ClusterIssuer, Certificate, CertificateRequest, groups }: CertApi): PolicyRule[] => [
  rule(Issuer.kind, ['get', 'list', 'watch']),
  rule(Issuer.kind, ['get', 'update', 'patch'], 'status'),
  rule(ClusterIssuer.kind, ['get', 'list', 'watch']),
  rule(ClusterIssuer.kind, ['get', 'update', 'patch'], 'status'),
  rule(Certificate.kind, ['get', 'list', 'watch', 'update', 'patch']),
  rule(Certificate.kind, ['get', 'update', 'patch'], 'status'),
  rule(Certificate.kind, ['update'], 'finalizers'),
  rule(CertificateRequest.kind, ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']),
  rule(CertificateRequest.kind, ['get', 'update', 'patch'], 'status'),
  rule(CertificateRequest.kind, ['update'], 'finalizers'),
  rule(Secret, ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']),
  rule(CoreEvent, ['create', 'patch']),
  // The internal approver approves requests for this operator's issuers (the approval webhook asks
  // for `approve` on their signers), and the webhook asks the API server who else may.
  {
    apiGroups: [groups.cert],
    resources: ['signers'],
    verbs: ['approve'],
    resourceNames: [`issuers.${groups.cert}/*`, `clusterissuers.${groups.cert}/*`],
    clusterScoped: true,
  },
  rule(SubjectAccessReview, ['create']),
  // Beside a running cert-manager: whether its Certificate still holds a Secret (cert-manager-owner.ts).
  ...(groups.mode === 'opkit' ? [rule(CertManagerCertificate, ['get'])] : []),
];

/**
 * What the ACME Order and Challenge controllers do: their own resources, and the solver pods,
 * Services and Ingresses or HTTPRoutes (created, watched, deleted; a named Ingress is patched).
 */
export const acmeRbac = ({ Order, Challenge }: CertApi): PolicyRule[] => [
  rule(Order.kind, ['get', 'list', 'watch', 'create', 'delete']),
  rule(Order.kind, ['get', 'update', 'patch'], 'status'),
  // Owner references with blockOwnerDeletion need update on the owner's finalizers.
  rule(Order.kind, ['update'], 'finalizers'),
  rule(Challenge.kind, ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']),
  rule(Challenge.kind, ['get', 'update', 'patch'], 'status'),
  rule(Challenge.kind, ['update'], 'finalizers'),
  rule(Pod, ['get', 'list', 'watch', 'create', 'delete']),
  rule(Service, ['get', 'list', 'watch', 'create', 'delete']),
  rule(Ingress, ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']),
  rule(HTTPRoute, ['get', 'list', 'watch', 'create', 'delete']),
];

/** What the renewal-info controller does: read Certificates, their issuers and Secrets; write what the CA said into the status. */
export const renewalInfoRbac = ({ Issuer, ClusterIssuer, Certificate }: CertApi): PolicyRule[] => [
  rule(Certificate.kind, ['get', 'list', 'watch']),
  rule(Certificate.kind, ['get', 'update', 'patch'], 'status'),
  rule(Issuer.kind, ['get', 'list', 'watch']),
  rule(ClusterIssuer.kind, ['get', 'list', 'watch']),
  rule(Secret, ['get', 'list', 'watch']),
  rule(CoreEvent, ['create', 'patch']),
];

/**
 * What a certificate shim does: read the Ingresses (or Gateways) it serves, and create, update and
 * delete the Certificates it derives from them. The Certificates' owner references block their
 * owner's deletion, which needs update on the owner's finalizers where that admission check runs.
 */
export const shimRbac = ({ Certificate }: CertApi, owner: Kind): PolicyRule[] => [
  rule(owner, ['get', 'list', 'watch']),
  rule(owner, ['update'], 'finalizers'),
  rule(Certificate.kind, ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']),
  rule(CoreEvent, ['create', 'patch']),
];

/**
 * What Gateway API self-service adds to a shim's rules (controllers/shims/self-service.ts): the
 * routes' status, the grants in their namespaces, the listeners on Gateways (server-side apply is
 * a patch), the namespaces' labels. The chart grants them only with `acme.gatewaySelfService`.
 */
export const selfServiceRbac = (): PolicyRule[] => [
  rule(HTTPRoute, ['get', 'list', 'watch']),
  rule(HTTPRoute, ['get', 'update', 'patch'], 'status'),
  rule(HTTPRoute, ['update'], 'finalizers'),
  rule(ReferenceGrant, ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']),
  rule(Gateway, ['get', 'list', 'watch', 'patch']),
  rule(Namespace, ['get', 'list', 'watch']),
  rule(CoreEvent, ['create', 'patch']),
];

/**
 * What ListenerSets add to self-service (`--enable-gateway-listener-sets`): the routes' own
 * ListenerSets (made, applied, removed), the teams' annotated ones read, and their finalizers
 * (a Certificate's owner reference blocks its owner's deletion).
 */
export const listenerSetRbac = (): PolicyRule[] => [
  rule(ListenerSet, ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']),
  rule(ListenerSet, ['update'], 'finalizers'),
];
