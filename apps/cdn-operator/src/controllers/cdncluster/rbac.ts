import { ConfigMap, CoreEvent, Deployment, rule, Service, type PolicyRule } from '@opkit/runtime';
import { CdnCluster } from '../../api/v1/cdncluster.js';

/** Exactly what the CdnCluster controller does with the API; the chart's roles are generated from this. */
export const cdnRbac: PolicyRule[] = [
  rule(CdnCluster.kind, ['get', 'list', 'watch']),
  rule(CdnCluster.kind, ['get', 'update', 'patch'], 'status'),
  // Owner references with blockOwnerDeletion need this where OwnerReferencesPermissionEnforcement runs.
  rule(CdnCluster.kind, ['update'], 'finalizers'),
  rule(ConfigMap, ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']),
  rule(Deployment, ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']),
  rule(Service, ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']),
  rule(CoreEvent, ['create', 'patch']),
];
