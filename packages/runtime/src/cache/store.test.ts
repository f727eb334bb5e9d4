import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../client/types.js';
import { Store } from './store.js';

const obj = (name: string, rv: string, sources: string[] = [], ns = 'default'): KubeObject & { spec: { sources: string[] } } => ({
  metadata: { name, namespace: ns, resourceVersion: rv, uid: `uid-${name}` },
  spec: { sources },
});

describe('Store', () => {
  it('applies a relist in slices: each slice changes the store as it is yielded, deletions come last', () => {
    const s = new Store<ReturnType<typeof obj>>();
    s.replace(['a', 'b', 'c', 'd', 'e'].map((n) => obj(n, '1')));
    const slices = s.replaceInSlices([obj('a', '2'), obj('b', '1'), obj('f', '1'), obj('g', '1'), obj('h', '1')], 2);
    const seen: string[][] = [];
    for (const deltas of slices) {
      seen.push(deltas.map((d) => `${d.type} ${d.obj.metadata.name}`));
      // What a slice reports is in the store when the slice is handed on.
      for (const d of deltas) expect(s.get(`default/${d.obj.metadata.name}`)).toBe(d.type === 'delete' ? undefined : d.obj);
    }
    expect(seen).toEqual([['update a'], ['add f', 'add g'], ['add h'], ['delete c', 'delete d'], ['delete e']]);
    expect(s.size).toBe(5);
  });

  it('diffs a relist against its content, reporting deletions that happened while disconnected', () => {
    const s = new Store<ReturnType<typeof obj>>();
    s.replace([obj('a', '1'), obj('b', '1'), obj('c', '1')]);
    const deltas = s.replace([obj('a', '1'), obj('b', '2'), obj('d', '1')]);
    expect(deltas.map((d) => `${d.type} ${d.obj.metadata.name}`).sort()).toEqual(['add d', 'delete c', 'update b']);
    expect(
      s
        .list()
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(['a', 'b', 'd']);
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
    expect(
      s
        .select({ index: { name: 'source', value: 'cache-live' } })
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(['balancer', 'other']);
    s.upsert(obj('balancer', '2', ['cache-vod']));
    expect(s.select({ index: { name: 'source', value: 'cache-live' } }).map((o) => o.metadata.name)).toEqual(['other']);
    s.remove(obj('other', '3'));
    expect(s.select({ index: { name: 'source', value: 'cache-live' } })).toEqual([]);
    expect(s.select({ index: { name: 'source', value: 'cache-vod' } }).map((o) => o.metadata.name)).toEqual(['balancer']);
    expect(() => s.select({ index: { name: 'nope', value: 'x' } })).toThrow(/no index named "nope"/);
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

  it('selects by namespace, index and label values from its indexes, kept up to date as labels and objects change', () => {
    type Pod = KubeObject & { spec: { sources: string[] } };
    const pod = (name: string, ns: string, labels: Record<string, string>, rv = '1'): Pod => ({
      metadata: { name, namespace: ns, labels, resourceVersion: rv, uid: `uid-${ns}-${name}` },
      spec: { sources: [labels.app ?? ''] },
    });
    const s = new Store<Pod>();
    s.addIndex('source', (o) => o.spec.sources);
    s.upsert(pod('a1', 'a', { app: 'web', tier: 'front' }));
    s.upsert(pod('a2', 'a', { app: 'db' }));
    s.upsert(pod('b1', 'b', { app: 'web' }));
    const names = (q: Parameters<typeof s.select>[0]) =>
      s
        .select(q)
        .map((o) => `${o.metadata.namespace}/${o.metadata.name}`)
        .sort();
    expect(names({})).toEqual(['a/a1', 'a/a2', 'b/b1']);
    expect(names({ namespace: 'a' })).toEqual(['a/a1', 'a/a2']);
    expect(names({ labels: [{ key: 'app', values: ['web'] }] })).toEqual(['a/a1', 'b/b1']);
    expect(names({ namespace: 'a', labels: [{ key: 'app', values: ['web', 'db'] }] })).toEqual(['a/a1', 'a/a2']);
    expect(names({ namespace: 'b', index: { name: 'source', value: 'web' } })).toEqual(['b/b1']);
    expect(names({ namespace: 'c' })).toEqual([]);
    // A label changed, an object moved out of a value, one removed: the indexes follow.
    s.upsert(pod('a1', 'a', { app: 'db' }, '2'));
    expect(names({ labels: [{ key: 'app', values: ['web'] }] })).toEqual(['b/b1']);
    expect(names({ labels: [{ key: 'app', values: ['db'] }] })).toEqual(['a/a1', 'a/a2']);
    expect(names({ labels: [{ key: 'tier', values: ['front'] }] })).toEqual([]);
    s.remove(pod('a2', 'a', { app: 'db' }, '3'));
    expect(names({ namespace: 'a', labels: [{ key: 'app', values: ['db'] }] })).toEqual(['a/a1']);
    // A relist that drops and adds objects keeps them too.
    s.replace([pod('b1', 'b', { app: 'web' }), pod('c1', 'c', { app: 'web' })]);
    expect(names({ labels: [{ key: 'app', values: ['web'] }] })).toEqual(['b/b1', 'c/c1']);
    expect(names({ namespace: 'a' })).toEqual([]);
  });
});
