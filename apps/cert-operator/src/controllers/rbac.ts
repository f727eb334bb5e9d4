import { CoreEvent, rule, Secret, type PolicyRule } from '@opkit/runtime';
import { Certificate } from '../api/v1/certificate.js';
import { CertificateRequest } from '../api/v1/certificaterequest.js';
import { ClusterIssuer, Issuer } from '../api/v1/issuer.js';

/** Exactly what the issuer, certificate and request controllers do with the API. */
export const certificatesRbac: PolicyRule[] = [
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
];
