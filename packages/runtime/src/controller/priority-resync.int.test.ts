import { startControlPlane, waitFor, type ControlPlane } from '@opkit/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../client/client.js';
import { ConfigMap, Namespace } from '../client/kind.js';
import { Transport } from '../client/transport.js';
import type { Manager } from '../manager/manager.js';
import { testManager } from '../testing/harness.js';
import { controllerFor } from './builder.js';
import type { Trigger } from './provenance.js';

// The queue's priorities and the periodic resync, seen from what a user cares about: an edit is not
// stuck behind a start's replay, and state nobody announces is reconciled again.
describe('priorities and resync against a real API server', () => {
  let plane: ControlPlane;
  let admin: Client;
  let manager: Manager | undefined;
  let n = 0;

  beforeAll(async () => {
    plane = await startControlPlane();
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'test-admin' });
  });
  afterAll(() => plane?.stop());
  afterEach(async () => {
    await manager?.stop();
    manager = undefined;
  });
  const freshNamespace = async () => {
    const name = `p${++n}`;
    await admin.create(Namespace, { metadata: { name } });
    return name;
  };

  it("reconciles a user's edit made during a start before the 300 objects the start replays", async () => {
    const ns = await freshNamespace();
    for (let i = 0; i < 300; i += 50)
      await Promise.all(Array.from({ length: 50 }, (_, j) => admin.create(ConfigMap, { metadata: { name: `old-${i + j}`, namespace: ns } })));
    const order: string[] = [];
    const t = testManager(plane.kubeConfig, { namespaces: [ns] });
    manager = t.manager;
    manager.add(
      controllerFor(ConfigMap).reconcile(async (req) => {
        order.push(req.name);
        await new Promise((r) => setTimeout(r, 10)); // 300 × 10 ms: the replay takes 3 s
      }),
    );
    await manager.start();
    await admin.create(ConfigMap, { metadata: { name: 'edit', namespace: ns } });
    await waitFor('the edit reconciled', () => order.includes('edit'), { timeoutMs: 30_000 });
    const before = order.indexOf('edit');
    // First-in-first-out it would come 301st, after every replayed object.
    expect(before).toBeLessThan(150);
    await waitFor('the replay finished', () => order.length === 301, { timeoutMs: 30_000 });
  });

  it('reconciles every object again each resync period, past the predicates, and not when resync is off', async () => {
    const ns = await freshNamespace();
    await admin.create(ConfigMap, { metadata: { name: 'a', namespace: ns } });
    const runs = (period: number) => {
      const seen: Trigger['source'][][] = [];
      const t = testManager(plane.kubeConfig, { namespaces: [ns] });
      t.manager.add(
        controllerFor(ConfigMap, { predicates: [{ update: () => false }] })
          .withOptions({ resyncPeriodMs: period })
          .reconcile((_, ctx) => {
            seen.push(ctx.triggers.map((tr) => tr.source));
          }),
      );
      return { manager: t.manager, seen };
    };
    const on = runs(1_000);
    manager = on.manager;
    await manager.start();
    await waitFor('two resyncs', () => on.seen.filter((s) => s.includes('resync')).length >= 2, { timeoutMs: 10_000 });
    expect(on.seen[0]).toEqual(['watch']); // the start's replay
    await manager.stop();

    const off = runs(0);
    manager = off.manager;
    await manager.start();
    await new Promise((r) => setTimeout(r, 3_000));
    expect(off.seen).toEqual([['watch']]);
  });
});
