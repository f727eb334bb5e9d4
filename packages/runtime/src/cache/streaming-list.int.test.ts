import { startControlPlane, waitFor, type ControlPlane } from '@opkit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../client/client.js';
import { ConfigMap, Namespace } from '../client/kind.js';
import { Transport, type RequestSpec } from '../client/transport.js';
import { captureLogger } from '../testing/log-capture.js';
import { Informer } from './informer.js';

/** More than a LIST page (500) and than a slice the informer hands on per turn of the event loop (500). */
const OBJECTS = 1_200;

/** The real transport, recording what the watcher asks for: a full list streamed, or LIST pages. */
class RecordingTransport extends Transport {
  readonly asked: { kind: 'list' | 'stream'; query: RequestSpec['query'] }[] = [];
  override request<T>(spec: RequestSpec): Promise<T> {
    if (spec.method === 'GET' && spec.path.endsWith('/configmaps')) this.asked.push({ kind: 'list', query: spec.query });
    return super.request<T>(spec);
  }
  override stream(spec: RequestSpec) {
    this.asked.push({ kind: 'stream', query: spec.query });
    return super.stream(spec);
  }
}

async function fill(plane: ControlPlane, namespace: string) {
  const admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'test-admin' });
  await admin.create(Namespace, { metadata: { name: namespace } });
  const names = Array.from({ length: OBJECTS }, (_, i) => `cm-${i}`);
  for (let i = 0; i < names.length; i += 50)
    await Promise.all(names.slice(i, i + 50).map((name) => admin.create(ConfigMap, { metadata: { name, namespace }, data: { v: '1' } })));
  return admin;
}

describe('full lists against a real API server', () => {
  describe('where it streams them (WatchList, on by default since Kubernetes 1.32)', () => {
    let plane: ControlPlane;
    let admin: Client;
    beforeAll(async () => {
      plane = await startControlPlane();
      admin = await fill(plane, 'lots');
    });
    afterAll(() => plane?.stop());

    it('streams the list (no LIST request), keeps the stream as its watch, and lets the event loop run while it applies the list', async () => {
      const transport = new RecordingTransport(plane.kubeConfig);
      const informer = new Informer(transport, ConfigMap, captureLogger().logger, { namespace: 'lots' });
      // Other work of the process (another informer, a probe, a reconcile): how often did it get a turn during the sync?
      let turns = 0;
      let ticking = true;
      const tick = () => {
        turns++;
        if (ticking) setImmediate(tick);
      };
      setImmediate(tick);
      let adds = 0;
      let turnAtFirstAdd = 0;
      let turnAtLastAdd = 0;
      informer.addHandler({
        onAdd: () => {
          adds++;
          if (adds === 1) turnAtFirstAdd = turns;
          if (adds === OBJECTS) turnAtLastAdd = turns;
        },
      });
      informer.start();
      try {
        await informer.waitForSync();
        ticking = false;
        expect(informer.store.size).toBe(OBJECTS);
        expect(adds).toBe(OBJECTS);
        expect(transport.asked.map((a) => a.kind)).toEqual(['stream']);
        expect(transport.asked[0]!.query).toMatchObject({ sendInitialEvents: 'true', resourceVersionMatch: 'NotOlderThan' });
        // The list is handed to handlers in slices, with turns of the event loop between them.
        expect(turnAtLastAdd - turnAtFirstAdd).toBeGreaterThanOrEqual(2);

        await admin.create(ConfigMap, { metadata: { name: 'later', namespace: 'lots' } });
        await admin.delete(ConfigMap, { namespace: 'lots', name: 'cm-0' });
        await waitFor('the watch that followed the list to deliver a create and a delete', () =>
          informer.store.get('lots/later') && !informer.store.get('lots/cm-0') ? true : undefined,
        );
        // Still the one stream: the list was the beginning of the watch.
        expect(transport.asked.map((a) => a.kind)).toEqual(['stream']);
      } finally {
        ticking = false;
        await informer.stop();
      }
    });

    it('streams metadata-only lists too (PartialObjectMetadata events, the end bookmark among them)', async () => {
      const transport = new RecordingTransport(plane.kubeConfig);
      const informer = new Informer(transport, ConfigMap, captureLogger().logger, { namespace: 'lots', metadataOnly: true });
      informer.start();
      try {
        await informer.waitForSync();
        expect(informer.store.size).toBeGreaterThanOrEqual(OBJECTS - 1);
        expect(informer.store.list().every((o) => (o as { data?: unknown }).data === undefined)).toBe(true);
        expect(transport.asked.map((a) => a.kind)).toEqual(['stream']);
      } finally {
        await informer.stop();
      }
    });

    it('lists by pages when told not to stream', async () => {
      const transport = new RecordingTransport(plane.kubeConfig);
      const informer = new Informer(transport, ConfigMap, captureLogger().logger, { namespace: 'lots', timing: { streamingLists: false } });
      informer.start();
      try {
        await informer.waitForSync();
        expect(informer.store.size).toBeGreaterThanOrEqual(OBJECTS - 1);
        expect(transport.asked.filter((a) => a.kind === 'list').length).toBe(3);
      } finally {
        await informer.stop();
      }
    });
  });

  describe('where the API server refuses to stream (WatchList off)', () => {
    let plane: ControlPlane;
    beforeAll(async () => {
      plane = await startControlPlane({ apiServerArgs: ['--feature-gates=WatchList=false'] });
      await fill(plane, 'lots');
    });
    afterAll(() => plane?.stop());

    it('falls back to paginated LISTs at once, says so, and stays with them', async () => {
      const transport = new RecordingTransport(plane.kubeConfig);
      const logs = captureLogger();
      const informer = new Informer(transport, ConfigMap, logs.logger, { namespace: 'lots' });
      informer.start();
      try {
        await informer.waitForSync();
        expect(informer.store.size).toBe(OBJECTS);
        await waitFor('the watch after the LIST', () => informer.health.connected || undefined);
        expect(transport.asked.map((a) => a.kind)).toEqual(['stream', 'list', 'list', 'list', 'stream']);
        expect(transport.asked[4]!.query).not.toHaveProperty('sendInitialEvents');
        expect(logs.find(/does not stream lists/)).toHaveLength(1);
        expect(informer.health.failures).toBe(0);
      } finally {
        await informer.stop();
      }
    });
  });
});
