import { describe, expect, it } from 'vitest';
import { ConfigMap, Deployment, Pod } from '../client/kind.js';
import { mergeRules, rule } from './rules.js';

describe('mergeRules', () => {
  it('unions verbs per resource in a stable order', () => {
    expect(
      mergeRules(
        [rule(Deployment, ['watch', 'get']), rule(Pod, ['list'])],
        [rule(Deployment, ['create', 'get', 'list']), rule(ConfigMap, ['get']), rule(Deployment, ['update'], 'status')],
      ),
    ).toEqual([
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
      { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list', 'watch', 'create'] },
      { apiGroups: ['apps'], resources: ['deployments/status'], verbs: ['update'] },
    ]);
  });
});
