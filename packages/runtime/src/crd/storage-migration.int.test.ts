import { waitFor } from '@opkit/testing';
import { describe, expect, it } from 'vitest';
import { GizmoV1alpha1, GizmoV1beta1, Gizmos, MODE_ANNOTATION } from '../../examples/webhooks/gizmo.js';
import { CustomResourceDefinition, Namespace } from '../client/kind.js';
import type { KubeObject } from '../client/types.js';
import { localWebhooks, testManager } from '../testing/harness.js';
import { useControlPlane } from '../testing/control-plane-suite.js';
import { withConversionClient } from '../webhook/configuration.js';

const storedVersions = async (admin: { get: (k: typeof CustomResourceDefinition, key: { name: string }) => Promise<KubeObject> }) =>
  ((await admin.get(CustomResourceDefinition, { name: Gizmos.crd.metadata.name })) as KubeObject & { status?: { storedVersions?: string[] } }).status
    ?.storedVersions;

/**
 * Objects written before the hub version existed stay stored in their old version until written
 * again, and the CRD's storedVersions keeps naming that version: the next release could not drop
 * it. The leader rewrites every object and trims storedVersions, after serving the conversion.
 */
describe('storage-version migration', () => {
  const suite = useControlPlane({}, async (_, admin) => {
    await admin.create(Namespace, { metadata: { name: 'old' } });
    // The API as it was: v1alpha1 only, and 30 Gizmos stored in it.
    await admin.create(CustomResourceDefinition, GizmoV1alpha1.crd as never);
    await waitFor('the v1alpha1 Gizmo CRD to be served', () => admin.list(GizmoV1alpha1.kind).then(() => true));
    for (let i = 0; i < 30; i++)
      await admin.create(GizmoV1alpha1.kind, { metadata: { namespace: 'old', name: `g${i}`, labels: { team: 'a' } }, spec: { size: i } } as never);
  });

  it('rewrites what is stored in an old version and trims storedVersions to the hub, losing nothing', async () => {
    const webhooks = await localWebhooks('old');
    const crd = await suite.admin.get(CustomResourceDefinition, { name: Gizmos.crd.metadata.name });
    await suite.admin.update(CustomResourceDefinition, { ...crd, spec: withConversionClient(Gizmos.crd, { url: webhooks.url }).spec } as never);
    // The API server adds the new storage version at once; nothing has moved yet.
    expect((await storedVersions(suite.admin))?.sort()).toEqual(['v1alpha1', 'v1beta1']);

    const { manager, logs } = testManager(suite.plane.kubeConfig, { name: 'gizmo-operator', namespaces: ['old'], webhook: webhooks.options });
    manager.addConversion(Gizmos);
    await manager.start();
    try {
      await waitFor('storedVersions trimmed to the hub', async () => (await storedVersions(suite.admin))?.join() === 'v1beta1', { timeoutMs: 30_000 });
      expect(logs.find(/storage-version migration done/)).toHaveLength(1);
      // Every object reads as it was, in both versions; a v1beta1-only field was defaulted on the way.
      const beta = await suite.admin.list(GizmoV1beta1.kind, { namespace: 'old' });
      expect(beta.items.map((g) => [g.metadata.name, g.spec.replicas, g.spec.mode, g.metadata.labels?.team]).sort()).toEqual(
        Array.from({ length: 30 }, (_, i) => [`g${i}`, i, 'fast', 'a']).sort(),
      );
      const alpha = await suite.admin.get(GizmoV1alpha1.kind, { namespace: 'old', name: 'g7' });
      expect(alpha.spec.size).toBe(7);
      expect(alpha.metadata.annotations?.[MODE_ANNOTATION]).toBe('fast');
    } finally {
      await manager.stop();
    }
  });
});
