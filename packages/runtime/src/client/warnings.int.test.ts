import { startControlPlane, waitFor, type ControlPlane } from '@opkit/testing';
import { Type } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controllerFor } from '../controller/builder.js';
import { defineCustomResource } from '../crd/custom-resource.js';
import { testManager } from '../testing/harness.js';
import { Client } from './client.js';
import { CustomResourceDefinition, Namespace } from './kind.js';
import { Transport } from './transport.js';

const Relic = defineCustomResource({
  group: 'test.opkit.dev',
  version: 'v1',
  kind: 'Relic',
  plural: 'relics',
  scope: 'Namespaced',
  spec: Type.Object({ n: Type.Integer() }),
  status: Type.Object({ n: Type.Optional(Type.Integer()) }),
});

describe("the API server's warnings", () => {
  let plane: ControlPlane;
  let admin: Client;
  beforeAll(async () => {
    plane = await startControlPlane();
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'test-admin' });
    const crd = structuredClone(Relic.crd) as unknown as { spec: { versions: Record<string, unknown>[] } };
    Object.assign(crd.spec.versions[0]!, { deprecated: true, deprecationWarning: 'test.opkit.dev/v1 Relic is deprecated; keep calm' });
    await admin.create(CustomResourceDefinition, crd as never);
    await waitFor('the Relic CRD to be served', () => admin.list(Relic.kind).then(() => true));
    await admin.create(Namespace, { metadata: { name: 'w' } });
  });
  afterAll(() => plane?.stop());

  it('are logged once per resource and text, however many requests carry them', async () => {
    const { manager, logs } = testManager(plane.kubeConfig, { namespaces: ['w'] });
    let reconciles = 0;
    manager.add(
      controllerFor(Relic.kind).reconcile(async (req, ctx) => {
        const r = await ctx.cache.get(Relic.kind, req);
        if (r) await ctx.updateStatus(Relic.kind, r, { n: r.spec.n });
        reconciles++;
      }),
    );
    await manager.start();
    try {
      for (let i = 0; i < 5; i++) await admin.create(Relic.kind, { metadata: { name: `r${i}`, namespace: 'w' }, spec: { n: i } });
      // Each reconcile's status write is a request to the deprecated version, as were the list and watch.
      await waitFor('five reconciles', () => reconciles >= 5);
      const warned = logs.find('the API server warned');
      expect(warned).toHaveLength(1);
      expect(warned[0]).toMatchObject({ resource: 'relics.test.opkit.dev', warning: 'test.opkit.dev/v1 Relic is deprecated; keep calm' });
    } finally {
      await manager.stop();
    }
  });
});
