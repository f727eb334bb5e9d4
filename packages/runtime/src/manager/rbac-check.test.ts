import { describe, expect, it } from 'vitest';
import { ConfigMap, Lease, Namespace } from '../client/kind.js';
import { rule } from '../rbac/rules.js';
import { describePermission, permissionsFor } from './rbac-check.js';

describe('permissionsFor', () => {
  it.each([
    [
      'namespaced rules in each watched namespace',
      [rule(ConfigMap, ['get', 'patch'])],
      ['a', 'b'],
      [
        'cannot get configmaps in namespace a',
        'cannot get configmaps in namespace b',
        'cannot patch configmaps in namespace a',
        'cannot patch configmaps in namespace b',
      ],
    ],
    ['namespaced rules cluster-wide when watching all', [rule(ConfigMap, ['list'])], [], ['cannot list configmaps cluster-wide']],
    ['cluster-scoped rules cluster-wide, always', [rule(Namespace, ['get'])], ['a'], ['cannot get namespaces cluster-wide']],
    [
      'subresources and names',
      [{ ...rule(Lease, ['update'], 'status'), resourceNames: ['op-leader'] }],
      ['a'],
      ['cannot update leases/status.coordination.k8s.io "op-leader" in namespace a'],
    ],
  ])('%s', (_what, rules, namespaces, expected) => {
    expect(permissionsFor(rules, namespaces).map(describePermission).sort()).toEqual(expected);
  });
});
