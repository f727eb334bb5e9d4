import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../client/types.js';
import { Store } from './store.js';

const obj = (name: string, rv: string, sources: string[] = [], ns = 'default'): KubeObject & { spec: { sources: string[] } } => ({
  metadata: { name, namespace: ns, resourceVersion: rv, uid: `uid-${name}` },
  spec: { sources },
});

describe('Store', () => {
  it('diffs a relist against its content, reporting deletions that happened while disconnected', () => {
    const s = new Store<ReturnType<typeof obj>>();
    s.replace([obj('a', '1'), obj('b', '1'), obj('c', '1')]);
    const deltas = s.replace([obj('a', '1'), obj('b', '2'), obj('d', '1')]);
    expect(deltas.map((d) => `${d.type} ${d.obj.metadata.name}`).sort()).toEqual(['add d', 'delete c', 'update b']);
    expect(s.list().map((o) => o.metadata.name).sort()).toEqual(['a', 'b', 'd']);
  });

  it('ignores an event for a resourceVersion it already has', () => {
    const s = new Store<ReturnType<typeof obj>>();
    s.upsert(obj('a', '5'));
    expect(s.upsert(obj('a', '5'))).toBeUndefined();
  });

  it('keeps indexes up to date through updates and deletes', () => {
    const s = new Store<ReturnType<typeof obj>>();
    s.addIndex('source', (o) => o.spec.sources);
    s.upsert(obj('balancer', '1', ['cache-live', 'cache-vod']));
    s.upsert(obj('other', '1', ['cache-live']));
    expect(s.byIndex('source', 'cache-live').map((o) => o.metadata.name).sort()).toEqual(['balancer', 'other']);
    s.upsert(obj('balancer', '2', ['cache-vod']));
    expect(s.byIndex('source', 'cache-live').map((o) => o.metadata.name)).toEqual(['other']);
    s.remove(obj('other', '3'));
    expect(s.byIndex('source', 'cache-live')).toEqual([]);
    expect(s.byIndex('source', 'cache-vod').map((o) => o.metadata.name)).toEqual(['balancer']);
    expect(() => s.byIndex('nope', 'x')).toThrow(/no index named "nope"/);
  });

  it('hands out frozen objects, so readers cannot corrupt the cache', () => {
    const s = new Store<ReturnType<typeof obj>>();
    s.upsert(obj('a', '1', ['x']));
    const got = s.get('default/a')!;
    expect(() => {
      got.spec.sources.push('y');
    }).toThrow(TypeError);
    expect(() => {
      (got.metadata as { name: string }).name = 'b';
    }).toThrow(TypeError);
    expect(s.get('default/a')!.spec.sources).toEqual(['x']);
  });
});
