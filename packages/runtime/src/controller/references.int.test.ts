import { waitFor } from '@opkit/testing';
import { Type } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CustomResourceDefinition, Namespace, Secret } from '../client/kind.js';
import { defineCustomResource } from '../crd/custom-resource.js';
import type { Manager } from '../manager/manager.js';
import { metricValue, scrape, testManager } from '../testing/harness.js';
import { useControlPlane } from '../testing/control-plane-suite.js';
import { controllerFor } from './builder.js';
import type { Trigger } from './provenance.js';

const Widget = defineCustomResource({
  group: 'test.opkit.dev',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  scope: 'Namespaced',
  spec: Type.Object({ secretName: Type.String(), color: Type.Optional(Type.String()) }),
});

describe('declared references: one line gives the index, the watch, the RBAC and full reads of only what is referenced', () => {
  const suite = useControlPlane({}, async (_, admin) => {
    await admin.create(CustomResourceDefinition, Widget.crd as never);
    await waitFor('Widgets served', () => admin.list(Widget.kind).then(() => true));
    await admin.create(Namespace, { metadata: { name: 'refs' } });
  });
  let manager: Manager;
  const seen: { widget: string; password?: string; triggers: readonly Trigger[] }[] = [];
  const definition = controllerFor(Widget.kind)
    .references(Secret, (w) => [w.spec.secretName])
    .reconcile(async (req, ctx) => {
      const w = await ctx.cache.get(Widget.kind, req);
      if (!w) return;
      const s = await ctx.readReferenced(Secret, { namespace: req.namespace, name: w.spec.secretName });
      seen.push({ widget: req.name, password: s?.data?.password && Buffer.from(s.data.password, 'base64').toString(), triggers: ctx.triggers });
    });

  beforeAll(async () => {
    manager = testManager(suite.plane.kubeConfig, { namespaces: ['refs'] }).manager;
    manager.add(definition);
    await manager.start();
  });
  afterAll(() => manager?.stop());

  const last = (widget: string) => seen.filter((s) => s.widget === widget).at(-1);
  const gets = async () => metricValue((await scrape(manager, '/metrics')).body, 'rest_client_requests_total', { method: 'GET', code: '200' }) ?? 0;

  it('declares read access to the referenced kind', () => {
    expect(definition.rbac).toEqual([{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] }]);
  });

  it('reconciles a Widget when the Secret it names appears and changes, reads it in full, and fetches each version once', async () => {
    const { admin } = suite;
    await admin.create(Widget.kind, { metadata: { namespace: 'refs', name: 'a' }, spec: { secretName: 'a-creds' } });
    await waitFor('a reconcile that finds no Secret', () => last('a') && last('a')!.password === undefined);

    await admin.create(Secret, { metadata: { namespace: 'refs', name: 'a-creds' }, stringData: { password: 'one' } } as never);
    await waitFor('a reconcile caused by the Secret, reading it', () => last('a')?.password === 'one');
    expect(last('a')!.triggers).toEqual([expect.objectContaining({ source: 'watch', kind: 'Secret', name: 'a-creds', event: 'add' })]);

    // The same Secret version again (the Widget changed): no second GET.
    const before = await gets();
    const runs = seen.length;
    await admin.patch(Widget.kind, { namespace: 'refs', name: 'a' }, { spec: { color: 'red' } });
    await waitFor('a reconcile caused by the Widget', () =>
      last('a')?.triggers.some((t) => t.source === 'watch' && t.kind === 'Widget' && t.event === 'update'),
    );
    expect(last('a')!.password).toBe('one');
    // One update, one reconcile (an update maps the old and the new object: their requests are queued once).
    await new Promise((r) => setTimeout(r, 1_000));
    expect(seen.slice(runs).map((s) => s.triggers.map((t) => t.source === 'watch' && `${t.kind} ${t.event}`))).toEqual([['Widget update']]);
    expect(await gets()).toBe(before);

    await admin.patch(Secret, { namespace: 'refs', name: 'a-creds' }, { stringData: { password: 'two' } });
    await waitFor('the new version read', () => last('a')?.password === 'two');
  });

  it('ignores Secrets nobody references, and holds no Secret data in its cache', async () => {
    const { admin } = suite;
    const count = seen.length;
    await admin.create(Secret, { metadata: { namespace: 'refs', name: 'unrelated' }, stringData: { password: 'x' } } as never);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(seen.length).toBe(count);
    const informers = manager.cache.informersOf(Secret);
    expect(informers.map((i) => i.options)).toEqual([{ metadataOnly: true }]);
    expect(informers[0]!.get({ namespace: 'refs', name: 'a-creds' })).not.toHaveProperty('data');
  });
});
