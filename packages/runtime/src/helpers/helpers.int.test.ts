import { startControlPlane, waitFor, type ControlPlane } from '@opkit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../client/client.js';
import { Cache } from '../cache/cache.js';
import { ApiError, isConflict, isInvalid } from '../client/errors.js';
import { ConfigMap, CoreEvent } from '../client/kind.js';
import { Transport } from '../client/transport.js';
import { EventRecorder } from '../events/recorder.js';
import { captureLogger } from '../testing/log-capture.js';
import { systemClock } from '../clock/clock.js';
import { reconcileContext, type RecordedWrite } from '../controller/reconcile-context.js';
import { addFinalizer, removeFinalizer } from './finalizers.js';

describe('finalizers and events against a real API server', () => {
  let plane: ControlPlane;
  let client: Client;
  beforeAll(async () => {
    plane = await startControlPlane();
    client = new Client(new Transport(plane.kubeConfig), { fieldManager: 'test' });
  });
  afterAll(() => plane?.stop());

  it("adds and removes finalizers without clobbering another controller's", async () => {
    const cm = await client.create(ConfigMap, { metadata: { name: 'f', namespace: 'default' } });
    const withOurs = await addFinalizer(client, ConfigMap, cm, 'opkit.dev/ours');
    expect(withOurs.metadata.finalizers).toEqual(['opkit.dev/ours']);
    // Someone else adds theirs after we read the object...
    await client.patch(ConfigMap, { namespace: 'default', name: 'f' }, [{ op: 'add', path: '/metadata/finalizers/-', value: 'example.com/theirs' }], 'json');
    // ...so adding from our stale copy fails instead of replacing the list.
    const stale = await addFinalizer(client, ConfigMap, withOurs, 'opkit.dev/second').catch((e) => e);
    expect(stale).toBeInstanceOf(ApiError);
    // A lost race on the list is a conflict (retried quietly, never reported on the object), not invalid input.
    expect(isConflict(stale)).toBe(true);
    expect(isInvalid(stale)).toBe(false);
    const fresh = await client.get(ConfigMap, { namespace: 'default', name: 'f' });
    const both = await addFinalizer(client, ConfigMap, fresh, 'opkit.dev/second');
    expect(both.metadata.finalizers).toEqual(['opkit.dev/ours', 'example.com/theirs', 'opkit.dev/second']);
    const removed = await removeFinalizer(client, ConfigMap, both, 'opkit.dev/ours');
    expect(removed.metadata.finalizers).toEqual(['example.com/theirs', 'opkit.dev/second']);
    // Removing from a stale copy (the entry moved): a conflict too.
    const moved = await removeFinalizer(client, ConfigMap, both, 'opkit.dev/second').catch((e) => e);
    expect(isConflict(moved)).toBe(true);
  });

  /** A reconcile's context, and the writes it records. */
  const contextFor = (cache: Cache) => {
    const writes: RecordedWrite[] = [];
    const ctx = reconcileContext(
      {
        log: captureLogger().logger,
        cache,
        client,
        recorder: new EventRecorder(client, captureLogger().logger, { component: 't' }),
        reconcileId: 'r',
        signal: new AbortController().signal,
        clock: systemClock,
      },
      writes,
    );
    return { ctx, writes };
  };

  it('finalizes through the context: adds the finalizer while the object lives, cleans up and removes it once it is deleted', async () => {
    const cache = new Cache(new Transport(plane.kubeConfig), captureLogger().logger, {});
    cache.start();
    try {
      const cleanups: string[] = [];
      const opts = { finalizer: 'opkit.dev/ours', cleanup: () => void cleanups.push('g') };
      const live = await client.create(ConfigMap, { metadata: { name: 'g', namespace: 'default' } });
      const first = contextFor(cache);
      expect((await first.ctx.finalize(ConfigMap, live, opts)).state).toBe('active');
      expect(first.writes.map((w) => w.expectation.kind)).toEqual(['written']);
      await client.delete(ConfigMap, { namespace: 'default', name: 'g' });
      const deleting = await client.get(ConfigMap, { namespace: 'default', name: 'g' });
      expect(deleting.metadata.finalizers).toEqual(['opkit.dev/ours']);
      const second = contextFor(cache);
      expect((await second.ctx.finalize(ConfigMap, deleting, opts)).state).toBe('finalized');
      expect(cleanups).toEqual(['g']);
      // The last finalizer went: the object is gone, and the context expects the cache to show that.
      expect(second.writes.map((w) => w.expectation.kind)).toEqual(['deleted']);
      expect(await client.find(ConfigMap, { namespace: 'default', name: 'g' })).toBeUndefined();
      // A reconcile holding the stale copy: already gone is what it wanted.
      expect((await contextFor(cache).ctx.finalize(ConfigMap, deleting, opts)).state).toBe('finalized');
    } finally {
      await cache.stop();
    }
  });

  it('deletes through the context: an object already on its way out gets no second delete', async () => {
    const cache = new Cache(new Transport(plane.kubeConfig), captureLogger().logger, {});
    cache.start();
    try {
      for (const name of ['d-plain', 'd-held'])
        await client.create(ConfigMap, { metadata: { name, namespace: 'default', finalizers: name === 'd-held' ? ['example.com/hold'] : [] } });
      const plain = (await cache.get(ConfigMap, { namespace: 'default', name: 'd-plain' }))!;
      const held = (await cache.get(ConfigMap, { namespace: 'default', name: 'd-held' }))!;
      const { ctx, writes } = contextFor(cache);
      expect(await ctx.delete(ConfigMap, plain)).toBe(true);
      expect(await ctx.delete(ConfigMap, held)).toBe(true);
      expect(writes.map((w) => `${w.key.name} ${w.expectation.kind}`)).toEqual(['d-plain deleted', 'd-held deleted']);
      const marked = await waitFor('the cache to show the held one marked', async () => {
        const cm = await cache.get(ConfigMap, { namespace: 'default', name: 'd-held' });
        return cm?.metadata.deletionTimestamp ? cm : undefined;
      });
      const rv = marked.metadata.resourceVersion;
      expect(await ctx.delete(ConfigMap, marked)).toBe(false);
      expect((await client.get(ConfigMap, { namespace: 'default', name: 'd-held' })).metadata.resourceVersion).toBe(rv);
      await removeFinalizer(client, ConfigMap, marked, 'example.com/hold');
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
    expect(warning).toMatchObject({
      type: 'Warning',
      count: 3,
      message: 'Source cache-live not found, will retry later',
      source: { component: 'test-operator' },
    });
    expect(warning.involvedObject).toMatchObject({ kind: 'ConfigMap', name: 'e', uid: cm.metadata.uid });
  });
});
