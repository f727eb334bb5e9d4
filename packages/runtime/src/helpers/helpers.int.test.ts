import { startControlPlane, waitFor, type ControlPlane } from '@opkit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../client/client.js';
import { Cache } from '../cache/cache.js';
import { ApiError } from '../client/errors.js';
import { ConfigMap, CoreEvent } from '../client/kind.js';
import { Transport } from '../client/transport.js';
import { EventRecorder } from '../events/recorder.js';
import { captureLogger } from '../testing/log-capture.js';
import { deleteObserved } from './delete.js';
import { addFinalizer, removeFinalizer } from './finalizers.js';

describe('finalizers and events against a real API server', () => {
  let plane: ControlPlane;
  let client: Client;
  beforeAll(async () => {
    plane = await startControlPlane();
    client = new Client(new Transport(plane.kubeConfig), { fieldManager: 'test' });
  });
  afterAll(() => plane?.stop());

  it('adds and removes finalizers without clobbering another controller\'s', async () => {
    const cm = await client.create(ConfigMap, { metadata: { name: 'f', namespace: 'default' } });
    const withOurs = await addFinalizer(client, ConfigMap, cm, 'opkit.dev/ours');
    expect(withOurs.metadata.finalizers).toEqual(['opkit.dev/ours']);
    // Someone else adds theirs after we read the object...
    await client.patch(ConfigMap, { namespace: 'default', name: 'f' }, [{ op: 'add', path: '/metadata/finalizers/-', value: 'example.com/theirs' }], 'json');
    // ...so adding from our stale copy fails instead of replacing the list.
    const stale = await addFinalizer(client, ConfigMap, withOurs, 'opkit.dev/second').catch((e) => e);
    expect(stale).toBeInstanceOf(ApiError);
    const fresh = await client.get(ConfigMap, { namespace: 'default', name: 'f' });
    const both = await addFinalizer(client, ConfigMap, fresh, 'opkit.dev/second');
    expect(both.metadata.finalizers).toEqual(['opkit.dev/ours', 'example.com/theirs', 'opkit.dev/second']);
    const removed = await removeFinalizer(client, ConfigMap, both, 'opkit.dev/ours');
    expect(removed.metadata.finalizers).toEqual(['example.com/theirs', 'opkit.dev/second']);
  });

  it('removing the last finalizer of a deleting object waits for it to be gone, and a stale copy counts as done', async () => {
    const cache = new Cache(new Transport(plane.kubeConfig), captureLogger().logger, {});
    cache.start();
    try {
      const cm = await addFinalizer(client, ConfigMap, await client.create(ConfigMap, { metadata: { name: 'g', namespace: 'default' } }), 'opkit.dev/ours');
      await cache.get(ConfigMap, { namespace: 'default', name: 'g' });
      await client.delete(ConfigMap, { namespace: 'default', name: 'g' });
      const deleting = await client.get(ConfigMap, { namespace: 'default', name: 'g' });
      expect(deleting.metadata.deletionTimestamp).toBeDefined();
      const started = Date.now();
      await removeFinalizer(client, ConfigMap, deleting, 'opkit.dev/ours', { cache });
      // Resolved by the deletion reaching the cache, not by the 5 s observe timeout.
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(await cache.get(ConfigMap, { namespace: 'default', name: 'g' })).toBeUndefined();
      // A reconcile holding the stale copy tries again: the object is gone, which is what it wanted.
      await expect(removeFinalizer(client, ConfigMap, deleting, 'opkit.dev/ours', { cache })).resolves.toBe(deleting);
      expect(cm.metadata.finalizers).toEqual(['opkit.dev/ours']);
    } finally {
      await cache.stop();
    }
  });

  it('deletes through the cache: the next reconcile sees the delete and sends none of its own', async () => {
    const cache = new Cache(new Transport(plane.kubeConfig), captureLogger().logger, {});
    cache.start();
    try {
      for (const name of ['d-plain', 'd-held']) await client.create(ConfigMap, { metadata: { name, namespace: 'default', finalizers: name === 'd-held' ? ['example.com/hold'] : [] } });
      const plain = (await cache.get(ConfigMap, { namespace: 'default', name: 'd-plain' }))!;
      const held = (await cache.get(ConfigMap, { namespace: 'default', name: 'd-held' }))!;
      expect(await deleteObserved(client, ConfigMap, plain, { cache })).toBe(true);
      expect(await cache.get(ConfigMap, { namespace: 'default', name: 'd-plain' })).toBeUndefined();
      // A finalizer holds this one: the cache shows it marked, and a later pass sends no second delete.
      expect(await deleteObserved(client, ConfigMap, held, { cache })).toBe(true);
      const marked = (await cache.get(ConfigMap, { namespace: 'default', name: 'd-held' }))!;
      expect(marked.metadata.deletionTimestamp).toBeDefined();
      const rv = marked.metadata.resourceVersion;
      expect(await deleteObserved(client, ConfigMap, marked, { cache })).toBe(false);
      expect((await client.get(ConfigMap, { namespace: 'default', name: 'd-held' })).metadata.resourceVersion).toBe(rv);
      await removeFinalizer(client, ConfigMap, marked, 'example.com/hold', { cache });
    } finally {
      await cache.stop();
    }
  });

  it('aggregates repeated events into one Event with a count', async () => {
    const cm = await client.create(ConfigMap, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'e', namespace: 'default' } });
    const recorder = new EventRecorder(client, captureLogger().logger, { component: 'test-operator' });
    for (let i = 0; i < 3; i++) {
      recorder.warning(cm, 'SourceNotFound', 'Source cache-live not found, will retry later');
      await recorder.flush();
    }
    recorder.normal(cm, 'Created', 'created it');
    await recorder.flush();
    const events = await waitFor('two events', async () => {
      const list = (await client.list(CoreEvent, { namespace: 'default', fieldSelector: 'involvedObject.name=e' })).items;
      return list.length === 2 && list;
    });
    const warning = events.find((e) => e.reason === 'SourceNotFound')!;
    expect(warning).toMatchObject({ type: 'Warning', count: 3, message: 'Source cache-live not found, will retry later', source: { component: 'test-operator' } });
    expect(warning.involvedObject).toMatchObject({ kind: 'ConfigMap', name: 'e', uid: cm.metadata.uid });
  });
});
