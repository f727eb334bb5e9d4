import { Client, ConfigMap, CustomResourceDefinition, Transport } from '@opkit/runtime';
import { metricValue, scrape, testManager } from '@opkit/runtime/testing';
import { startControlPlane, waitFor, type ControlPlane } from '@opkit/testing';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { greeterController } from './controller.js';
import { Greeting } from './greeting.js';

// The example that docs/runtime.md walks through, run against a real API server.
describe('the greeter example of docs/runtime.md', () => {
  let plane: ControlPlane;
  let admin: Client;
  beforeAll(async () => {
    plane = await startControlPlane({ audit: true });
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
    await admin.create(CustomResourceDefinition, Greeting.crd as never);
    await waitFor('the CRD to be served', () => admin.list(Greeting.kind).then(() => true));
  });
  afterAll(() => plane?.stop());

  it('greets, follows changes, and writes nothing when nothing changed', async () => {
    const { manager } = testManager(plane.kubeConfig, { name: 'greeter' });
    manager.add(greeterController);
    await manager.start();
    try {
      await admin.create(Greeting.kind, { metadata: { name: 'world', namespace: 'default' }, spec: { who: 'world' } as never });
      await waitFor('the greeting', async () => (await admin.find(ConfigMap, { namespace: 'default', name: 'world' }))?.data?.message === 'Hello, world!');
      const ready = await waitFor('Ready', async () => {
        const g = await admin.get(Greeting.kind, { namespace: 'default', name: 'world' });
        return g.status?.conditions?.[0]?.status === 'True' && g;
      });
      expect(ready.spec.style).toBe('plain'); // defaulted by the CRD schema

      await admin.patch(Greeting.kind, { namespace: 'default', name: 'world' }, { spec: { style: 'loud' } });
      await waitFor('the loud greeting', async () => (await admin.get(ConfigMap, { namespace: 'default', name: 'world' })).data?.message === 'HELLO, WORLD!');
      await waitFor('status to follow', async () => (await admin.get(Greeting.kind, { namespace: 'default', name: 'world' })).status?.observedGeneration === 2);

      // Another reconcile of the unchanged object: no writes at all.
      const reconciles = async () =>
        metricValue((await scrape(manager, '/metrics')).body, 'controller_runtime_reconcile_total', { controller: 'greeting', result: 'success' });
      await new Promise((r) => setTimeout(r, 1_000));
      const before = await reconciles();
      const since = new Date();
      await admin.patch(Greeting.kind, { namespace: 'default', name: 'world' }, { metadata: { labels: { touched: 'yes' } } });
      await waitFor('the label change to be reconciled', async () => (await reconciles()) > before);
      await new Promise((r) => setTimeout(r, 1_000));
      expect(
        plane
          .audit!.writes({ user: 'admin', since })
          .filter((e) => e.userAgent?.startsWith('greeter/'))
          .map((e) => `${e.verb} ${e.objectRef?.resource}`),
      ).toEqual([]);
      expect((await scrape(manager, '/readyz')).status).toBe(200);

      const invalid = await admin.create(Greeting.kind, { metadata: { name: 'nobody', namespace: 'default' }, spec: { who: '' } as never }).catch((e) => e);
      expect(invalid.message).toMatch(/spec.who: Invalid value: "": spec.who in body should be at least 1 chars long/);
    } finally {
      await manager.stop();
    }
  });

  it('is the code the documentation shows', () => {
    const doc = readFileSync(join(import.meta.dirname, '../../../../docs/runtime.md'), 'utf8');
    for (const file of ['greeting.ts', 'controller.ts', 'main.ts']) {
      expect(doc, `docs/runtime.md must embed examples/greeter/${file} verbatim`).toContain(readFileSync(join(import.meta.dirname, file), 'utf8').trim());
    }
  });
});
