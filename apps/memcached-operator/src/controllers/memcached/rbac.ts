import { CoreEvent, Deployment, Pod, rule, Service, type PolicyRule } from '@opkit/runtime';
import { Memcached } from '../../api/v1beta1/memcached.js';

/** Exactly what the memcached controller does with the API; the chart's roles are generated from this. */
export const memcachedRbac: PolicyRule[] = [
  rule(Memcached.kind, ['get', 'list', 'watch', 'update', 'patch']),
  rule(Memcached.kind, ['get', 'update', 'patch'], 'status'),
  rule(Memcached.kind, ['update'], 'finalizers'),
  rule(Deployment, ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']),
  rule(Service, ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']),
  rule(Pod, ['get', 'list', 'watch']),
  rule(CoreEvent, ['create', 'patch']),
];
