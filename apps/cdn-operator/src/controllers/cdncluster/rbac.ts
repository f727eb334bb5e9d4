import { ConfigMap, CoreEvent, Deployment, rule, Service, type PolicyRule } from '@opkit/runtime';
import { CdnCluster } from '../../api/v1/cdncluster.js';

/**
 * What the CdnCluster controller writes and owns; reading CdnClusters comes with its
 * `.references(CdnCluster.kind, …)`. The chart's roles are generated from the controller's
 * definition (`CDN_RULES`), which has both.
 */
export const cdnRbac: PolicyRule[] = [
  rule(CdnCluster.kind, ['get', 'update', 'patch'], 'status'),
  // Owner references with blockOwnerDeletion need this where OwnerReferencesPermissionEnforcement runs.
  rule(CdnCluster.kind, ['update'], 'finalizers'),
  rule(ConfigMap, ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']),
  rule(Deployment, ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']),
  rule(Service, ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']),
  rule(CoreEvent, ['create', 'patch']),
];
