import { describe, expect, it } from 'vitest';
import { parseResourceList } from './discovery.js';

describe('parseResourceList', () => {
  it('keeps resources, not subresources or malformed entries', () => {
    const body = {
      kind: 'APIResourceList',
      resources: [
        { name: 'deployments', kind: 'Deployment', namespaced: true, verbs: ['get', 'list'] },
        { name: 'deployments/scale', kind: 'Scale', namespaced: true, verbs: ['get'] },
        { name: 'nodes', kind: 'Node', namespaced: false },
        { name: 'Bad Name', kind: 'X', namespaced: true },
        { name: 'widgets', kind: 'Widget', namespaced: 'yes' },
        null,
      ],
    };
    expect(parseResourceList(body)).toEqual([
      { name: 'deployments', kind: 'Deployment', namespaced: true, verbs: ['get', 'list'] },
      { name: 'nodes', kind: 'Node', namespaced: false, verbs: [] },
    ]);
  });
  it('reads nothing from what is not a resource list', () => {
    for (const body of [null, 'text', 42, { resources: 'all' }, []]) expect(parseResourceList(body)).toEqual([]);
  });
});
