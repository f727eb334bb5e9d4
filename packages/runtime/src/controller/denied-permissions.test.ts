import { describe, expect, it } from 'vitest';
import { deniedPermission } from './denied-permissions.js';

describe('deniedPermission: what a refused request asked for', () => {
  it.each([
    ['PATCH', '/api/v1/namespaces/shop/configmaps/web', { verb: 'patch', group: '', resource: 'configmaps', namespace: 'shop', name: 'web' }],
    ['GET', '/api/v1/namespaces/shop/secrets', { verb: 'list', group: '', resource: 'secrets', namespace: 'shop' }],
    ['WATCH', '/apis/apps/v1/namespaces/shop/deployments', { verb: 'watch', group: 'apps', resource: 'deployments', namespace: 'shop' }],
    ['POST', '/apis/apps/v1/namespaces/shop/deployments', { verb: 'create', group: 'apps', resource: 'deployments', namespace: 'shop' }],
    [
      'PUT',
      '/apis/cache.opkit.dev/v1beta1/namespaces/shop/memcacheds/mc/status',
      { verb: 'update', group: 'cache.opkit.dev', resource: 'memcacheds', subresource: 'status', namespace: 'shop', name: 'mc' },
    ],
    [
      'POST',
      '/api/v1/namespaces/shop/pods/web-1/eviction',
      { verb: 'create', group: '', resource: 'pods', subresource: 'eviction', namespace: 'shop', name: 'web-1' },
    ],
    ['DELETE', '/api/v1/namespaces/shop/pods', { verb: 'deletecollection', group: '', resource: 'pods', namespace: 'shop' }],
    ['GET', '/api/v1/namespaces/shop', { verb: 'get', group: '', resource: 'namespaces', name: 'shop' }],
    [
      'GET',
      '/apis/rbac.authorization.k8s.io/v1/clusterroles/view',
      { verb: 'get', group: 'rbac.authorization.k8s.io', resource: 'clusterroles', name: 'view' },
    ],
    ['GET', '/api/v1/nodes?limit=500', { verb: 'list', group: '', resource: 'nodes' }],
  ])('%s %s', (method, path, permission) => {
    expect(deniedPermission(method, path)).toEqual(expect.objectContaining(permission));
    expect(Object.entries(deniedPermission(method, path)!).filter(([, v]) => v !== undefined)).toEqual(Object.entries(permission));
  });

  it.each([
    ['GET', '/livez'],
    ['GET', '/apis/apps'],
    ['OPTIONS', '/api/v1/pods'],
    ['GET', '/api/v1'],
  ])('names no resource: %s %s', (method, path) => {
    expect(deniedPermission(method, path)).toBeUndefined();
  });
});
