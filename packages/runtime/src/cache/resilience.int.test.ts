import { startControlPlane, waitFor, type ControlPlane } from '@opkit/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../client/client.js';
import { ConfigMap, Namespace } from '../client/kind.js';
import { Transport } from '../client/transport.js';
import type { Manager } from '../manager/manager.js';
import { recordingManager, scrape } from '../testing/harness.js';

/**
 * The API server goes away and comes back; changes happen while it is gone (straight in etcd) and
 * right around the outage. Nothing may be missed, no watch may stay dead, /cachez must tell (and /readyz must not: it routes webhook traffic).
 */
describe('informers across API server outages', () => {
  let plane: ControlPlane;
  let admin: Client;
  let manager: Manager | undefined;

  beforeAll(async () => {
    plane = await startControlPlane();
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'test-admin' });
  });
  afterAll(() => plane?.stop());
  afterEach(async () => {
    await manager?.stop();
    manager = undefined;
  });

  const restartApiServer = async (downMs: number, whileDown: () => Promise<void> = async () => undefined) => {
    await plane.apiServer.stop();
    const t0 = Date.now();
    await whileDown();
    await new Promise((r) => setTimeout(r, Math.max(0, downMs - (Date.now() - t0))));
    await plane.apiServer.start(60_000);
  };

  it('reconciles every change made around a 10 s outage, and /cachez goes red and comes back while /readyz stays green', async () => {
    await admin.create(Namespace, { metadata: { name: 'outage' } });
    for (const name of ['keep', 'edit', 'gone-in-etcd']) await admin.create(ConfigMap, { metadata: { name, namespace: 'outage' }, data: { v: '1' } });
    const r = recordingManager(plane.kubeConfig, 'outage');
    manager = r.manager;
    await manager.start();
    await waitFor('the initial state', () => r.state.size === 3);
    expect((await scrape(manager, '/cachez')).status).toBe(200);

    // Right before the outage: changes the watch may or may not deliver before the connection drops.
    await admin.patch(ConfigMap, { namespace: 'outage', name: 'edit' }, { data: { v: '2' } });
    await admin.create(ConfigMap, { metadata: { name: 'new-before', namespace: 'outage' }, data: { v: '1' } });

    let sawRed = '';
    let readyRed = false;
    await restartApiServer(10_000, async () => {
      // While the API server is down, an object disappears from storage.
      expect(await plane.etcd.deleteKey('/registry/configmaps/outage/gone-in-etcd')).toBe(1);
      sawRed = await waitFor(
        '/cachez to go red',
        async () => {
          if ((await scrape(manager!, '/readyz')).status !== 200) readyRed = true;
          const res = await scrape(manager!, '/cachez');
          return res.status === 500 && res.body;
        },
        { timeoutMs: 8_000 },
      );
    });
    expect(sawRed).toMatch(/\[-\]watches failed: watch failing: configmaps in outage/);
    expect(readyRed).toBe(false);

    // Right after: more changes.
    await admin.patch(ConfigMap, { namespace: 'outage', name: 'edit' }, { data: { v: '3' } });
    await admin.create(ConfigMap, { metadata: { name: 'new-after', namespace: 'outage' }, data: { v: '1' } });

    await waitFor(
      'every change to be reconciled',
      () => r.state.get('edit') === '3' && r.state.has('new-before') && r.state.has('new-after') && !r.state.has('gone-in-etcd') && r.state.get('keep') === '1',
      { timeoutMs: 30_000 },
    );
    expect(r.deletes).toContain('gone-in-etcd');
    await waitFor('/cachez to be green again', async () => (await scrape(manager!, '/cachez')).status === 200, { timeoutMs: 30_000 });
    expect(manager.cache.failing()).toEqual([]);
  });

  it('recovers from 410 Gone by relisting, and sees objects deleted while it was disconnected as deleted', async () => {
    await admin.create(Namespace, { metadata: { name: 'gone' } });
    for (const name of ['a', 'b']) await admin.create(ConfigMap, { metadata: { name, namespace: 'gone' }, data: { v: '1' } });
    const r = recordingManager(plane.kubeConfig, 'gone');
    manager = r.manager;
    await manager.start();
    await waitFor('the initial state', () => r.state.size === 2);

    await restartApiServer(1_000, async () => {
      // Behind the API server's back: delete one object, then compact etcd past the watch's
      // resourceVersion so the reconnecting watch cannot resume and gets 410 Gone.
      await plane.etcd.deleteKey('/registry/configmaps/gone/b');
      await plane.etcd.compact();
    });
    await admin.create(ConfigMap, { metadata: { name: 'c', namespace: 'gone' }, data: { v: '1' } });

    await waitFor('the deletion and the new object to be reconciled', () => !r.state.has('b') && r.state.has('c'), { timeoutMs: 30_000 });
    expect(r.deletes).toEqual(['b']);
    expect(r.logs.find('resourceVersion too old (410 Gone): relisting').length).toBeGreaterThan(0);
  });
});
