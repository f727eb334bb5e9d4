import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../wait.js';
import { startControlPlane, type ControlPlane } from './control-plane.js';

describe('a simulated cluster (controller-manager + scheduler + kwok nodes)', () => {
  let plane: ControlPlane;
  beforeAll(async () => {
    plane = await startControlPlane({ nodes: 2 });
    console.log(`simulated cluster started in ${plane.timings.total} ms`, plane.timings);
  });
  afterAll(() => plane?.stop());

  it('lists its simulated nodes through kubectl and the kubeconfig path', async () => {
    const out = await plane.kubectl([
      'get',
      'nodes',
      '-o',
      'custom-columns=NAME:.metadata.name,READY:.status.conditions[?(@.type=="Ready")].status',
      '--no-headers',
    ]);
    expect(
      out.stdout
        .trim()
        .split('\n')
        .map((l) => l.split(/\s+/)),
    ).toEqual([
      ['kwok-node-0', 'True'],
      ['kwok-node-1', 'True'],
    ]);
  });

  it('runs a 3-replica Deployment to 3 ready pods, and garbage-collects its ReplicaSet and pods on delete', async () => {
    const apps = plane.kubeConfig.makeApiClient(AppsV1Api);
    const core = plane.kubeConfig.makeApiClient(CoreV1Api);
    const labels = { app: 'web' };
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: {
        metadata: { name: 'web' },
        spec: {
          replicas: 3,
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } },
        },
      },
    });
    const ready = await waitFor(
      '3 ready replicas',
      async () => {
        const d = await apps.readNamespacedDeployment({ namespace: 'default', name: 'web' });
        return d.status?.readyReplicas === 3 && d;
      },
      { timeoutMs: 60_000 },
    );
    expect(ready.status?.availableReplicas).toBe(3);

    const pods = await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=web' });
    expect(pods.items).toHaveLength(3);
    expect(pods.items.every((p) => p.status?.phase === 'Running' && plane.nodes.includes(p.spec?.nodeName ?? ''))).toBe(true);
    const replicaSets = await apps.listNamespacedReplicaSet({ namespace: 'default', labelSelector: 'app=web' });
    expect(replicaSets.items).toHaveLength(1);

    await apps.deleteNamespacedDeployment({ namespace: 'default', name: 'web' });
    await waitFor(
      'the ReplicaSet and pods to be garbage-collected',
      async () => {
        const [rs, po] = await Promise.all([
          apps.listNamespacedReplicaSet({ namespace: 'default', labelSelector: 'app=web' }),
          core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=web' }),
        ]);
        return rs.items.length === 0 && po.items.length === 0;
      },
      { timeoutMs: 60_000 },
    );
  });
});
