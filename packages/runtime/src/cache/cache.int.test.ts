import { startControlPlane, waitFor, type ControlPlane } from '@opkit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureLogger } from '../testing/log-capture.js';
import { Client } from '../client/client.js';
import { ConfigMap, CustomResourceDefinition, defineKind, Namespace, Secret } from '../client/kind.js';
import { defineCustomResource } from '../crd/custom-resource.js';
import { Type } from '@sinclair/typebox';
import { Transport } from '../client/transport.js';
import { Cache, MissingInformerError } from './cache.js';

describe('the shared cache', () => {
  let plane: ControlPlane;
  let admin: Client;
  let cache: Cache;
  let requests: string[] = [];

  beforeAll(async () => {
    plane = await startControlPlane();
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'test-admin' });
    for (const ns of ['a', 'b', 'c']) await admin.create(Namespace, { metadata: { name: ns } });
    for (const ns of ['a', 'b', 'c']) {
      await admin.create(ConfigMap, {
        metadata: { name: 'app', namespace: ns, labels: { app: 'web', tier: ns === 'a' ? 'front' : 'back' } },
        data: { big: 'x'.repeat(1000) },
      });
      await admin.create(Secret, { metadata: { name: 'owned', namespace: ns, labels: { 'opkit.dev/managed': 'true' } }, stringData: { key: 'secret' } });
      await admin.create(Secret, { metadata: { name: 'unrelated', namespace: ns }, stringData: { key: 'other' } });
    }
    const transport = new Transport(plane.kubeConfig, { onResponse: (m) => requests.push(m) });
    cache = new Cache(transport, captureLogger().logger, { namespaces: ['a', 'b'] });
    cache.start();
  });
  afterAll(async () => {
    await cache?.stop();
    await plane?.stop();
  });

  it('watches only the configured namespaces and says so when asked for another', async () => {
    expect((await cache.list(ConfigMap)).map((c) => c.metadata.namespace).sort()).toEqual(['a', 'b']);
    await expect(cache.get(ConfigMap, { namespace: 'c', name: 'app' })).rejects.toThrow(/namespace "c" is not watched \(WATCH_NAMESPACE=a,b\)/);
  });

  it("watches one kind in an extra namespace when asked (an operator's own Secrets), and nothing else there", async () => {
    const own = new Cache(new Transport(plane.kubeConfig), captureLogger().logger, { namespaces: ['a'] });
    own.watchAlso(Secret, ['c']);
    own.start();
    try {
      expect((await own.list(Secret, {}, { labelSelector: 'opkit.dev/managed=true' })).map((s) => s.metadata.namespace).sort()).toEqual(['a', 'c']);
      expect((await own.get(Secret, { namespace: 'c', name: 'unrelated' }))?.metadata.name).toBe('unrelated');
      await expect(own.get(ConfigMap, { namespace: 'c', name: 'app' })).rejects.toThrow(/namespace "c" is not watched/);
      await expect(own.get(Secret, { namespace: 'b', name: 'owned' })).rejects.toThrow(/namespace "b" is not watched/);
    } finally {
      await own.stop();
    }
  });

  it('says at once which kind the API server does not serve (a CRD not installed), instead of waiting out the sync timeout', async () => {
    const Widget = defineKind({ group: 'widgets.example.test', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true });
    const c = new Cache(new Transport(plane.kubeConfig), captureLogger().logger, { namespaces: ['a'] });
    c.informer(ConfigMap);
    c.informer(Widget);
    c.start();
    try {
      const t0 = Date.now();
      const err = await c.waitForSync(120_000, 1_000).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(err?.message).toMatch(/does not serve[\s\S]*widgets\.widgets\.example\.test.*is its CustomResourceDefinition installed/);
      expect(err?.message).not.toContain('configmaps');
      expect(Date.now() - t0).toBeLessThan(30_000);
    } finally {
      await c.stop();
    }
  });

  it('answers reads from memory: no request reaches the API server once synced', async () => {
    await cache.list(ConfigMap);
    requests = [];
    for (let i = 0; i < 50; i++) {
      await cache.get(ConfigMap, { namespace: 'a', name: 'app' });
      await cache.list(ConfigMap, { labelSelector: 'tier in (front)' });
    }
    expect(requests).toEqual([]);
    expect((await cache.list(ConfigMap, { labelSelector: { tier: 'back' } })).map((c) => c.metadata.namespace)).toEqual(['b']);
  });

  it('keeps only labelled Secrets in full, and only metadata of the rest', async () => {
    const managed = await cache.list(Secret, {}, { labelSelector: 'opkit.dev/managed=true' });
    expect(managed.map((s) => `${s.metadata.namespace}/${s.metadata.name}`).sort()).toEqual(['a/owned', 'b/owned']);
    expect(managed[0]?.data?.key).toBe(Buffer.from('secret').toString('base64'));
    const meta = await cache.list(Secret, {}, { metadataOnly: true });
    expect(meta.map((s) => s.metadata.name).sort()).toEqual(['owned', 'owned', 'unrelated', 'unrelated']);
    expect(meta.every((s) => s.data === undefined && s.metadata.uid)).toBe(true);
    // managedFields are stripped from cached objects (half the memory of a typical object).
    expect(managed[0]?.metadata.managedFields).toBeUndefined();
    // ... in the metadata-only mode too, where they are most of what is left.
    expect(meta.filter((s) => s.metadata.managedFields)).toEqual([]);
  });

  it("caches only what a field selector on a custom resource's selectable field matches: the API server filters", async () => {
    const Bulb = defineCustomResource({
      group: 'test.opkit.dev',
      version: 'v1',
      kind: 'Bulb',
      plural: 'bulbs',
      scope: 'Namespaced',
      spec: Type.Object({ color: Type.String(), watts: Type.Integer() }),
      selectableFields: ['.spec.color'],
    });
    expect(Bulb.crd).toMatchObject({ spec: { versions: [{ selectableFields: [{ jsonPath: '.spec.color' }] }] } });
    await admin.create(CustomResourceDefinition, Bulb.crd as never);
    await waitFor('the Bulb CRD to be served', () => admin.list(Bulb.kind).then(() => true));
    for (const [name, color] of [
      ['b1', 'blue'],
      ['r1', 'red'],
      ['b2', 'blue'],
    ] as const)
      await admin.create(Bulb.kind, { metadata: { name, namespace: 'a' }, spec: { color, watts: 5 } });
    const selective = new Cache(new Transport(plane.kubeConfig), captureLogger().logger, { namespaces: ['a'] });
    selective.start();
    try {
      const blue = await selective.list(Bulb.kind, {}, { fieldSelector: 'spec.color=blue' });
      expect(blue.map((b) => b.metadata.name).sort()).toEqual(['b1', 'b2']);
      // The store holds only the matches: the red one never left the API server.
      expect(selective.informer(Bulb.kind, { fieldSelector: 'spec.color=blue' }).size).toBe(2);
      await admin.patch(Bulb.kind, { namespace: 'a', name: 'r1' }, { spec: { color: 'blue' } });
      await waitFor('the repainted bulb to join', async () => (await selective.list(Bulb.kind, {}, { fieldSelector: 'spec.color=blue' })).length === 3);
    } finally {
      await selective.stop();
    }
  });

  it('with failOnMissingInformer, refuses a read nothing declared instead of watching the kind; trims objects by transform; removes an informer', async () => {
    const strict = new Cache(new Transport(plane.kubeConfig), captureLogger().logger, { namespaces: ['a'], failOnMissingInformer: true });
    strict.transform(ConfigMap, (cm) => ({ ...cm, data: cm.data && Object.fromEntries(Object.keys(cm.data).map((k) => [k, ''])) }));
    strict.informer(ConfigMap);
    strict.start();
    try {
      // Declared: read from memory, trimmed (the 1,000-character value is not held).
      expect((await strict.get(ConfigMap, { namespace: 'a', name: 'app' }))?.data).toEqual({ big: '' });
      await expect(strict.get(Secret, { namespace: 'a', name: 'owned' })).rejects.toThrow(MissingInformerError);
      await expect(strict.list(ConfigMap, {}, { labelSelector: 'app=web' })).rejects.toThrow(
        /no informer for configmaps \(labels app=web\): nothing declared it before the start/,
      );
      expect(strict.informersOf(Secret)).toEqual([]);
      expect(() => strict.transform(ConfigMap, (c) => c)).toThrow(/informers of the kind exist already/);
      expect(await strict.removeInformer(ConfigMap)).toBe(true);
      expect(strict.informersOf(ConfigMap)).toEqual([]);
      expect(await strict.removeInformer(ConfigMap)).toBe(false);
    } finally {
      await strict.stop();
    }
  });

  it('syncs an empty metadata-only list (the server sends items: null)', async () => {
    await admin.create(Namespace, { metadata: { name: 'empty' } });
    const c = new Cache(new Transport(plane.kubeConfig), captureLogger().logger, { namespaces: ['empty'] });
    c.start();
    try {
      expect(await c.list(Secret, {}, { metadataOnly: true })).toEqual([]);
    } finally {
      await c.stop();
    }
  });

  it('maintains field indexes as objects change', async () => {
    cache.indexField(ConfigMap, 'tier', (cm) => [cm.metadata.labels?.tier ?? '']);
    expect((await cache.list(ConfigMap, { index: { name: 'tier', value: 'back' } })).map((c) => c.metadata.namespace)).toEqual(['b']);
    await admin.patch(ConfigMap, { namespace: 'a', name: 'app' }, { metadata: { labels: { tier: 'back' } } });
    await waitFor('the index to follow the change', async () => (await cache.list(ConfigMap, { index: { name: 'tier', value: 'back' } })).length === 2);
    expect(await cache.list(ConfigMap, { index: { name: 'tier', value: 'front' } })).toEqual([]);
  });

  it('hands out frozen objects', async () => {
    const cm = (await cache.get(ConfigMap, { namespace: 'b', name: 'app' }))!;
    expect(() => ((cm.data as Record<string, string>).big = 'changed')).toThrow(TypeError);
  });
});
