import { Client, CustomResourceDefinition, shardHash, Transport, withConversionClient } from '@opkit/runtime';
import { localWebhooks } from '@opkit/runtime/testing';
import { type FaultScenario } from '@opkit/runtime/testing/faults';
import { waitFor, type ControlPlane } from '@opkit/testing';
import { MemcachedAPI } from '../../api/conversion.js';
import { Memcached } from '../../api/v1beta1/memcached.js';
import { addMemcachedOperator } from '../../operator.js';

const COUNT = 8;

/**
 * The memcached operator under faults: two replicas, each serving its own webhooks (the API server
 * converts through the first, as it would through the Service), while an admin rescales eight
 * Memcacheds in turn. Converged: every Deployment has the size asked, and each status says so for
 * the current generation.
 */
export async function memcachedFaultScenario(plane: ControlPlane, ns: string, o: { sharded?: boolean } = {}): Promise<FaultScenario> {
  const replicas = o.sharded ? 3 : 2;
  const admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
  await plane.kubectl(['create', 'namespace', ns]);
  const webhooks: Awaited<ReturnType<typeof localWebhooks>>[] = [];
  for (let r = 0; r < replicas; r++) webhooks.push(await localWebhooks(ns));
  const crd = withConversionClient(MemcachedAPI.crd, { url: webhooks[0]!.url }) as never as { metadata: { name: string }; spec: object };
  const current = await admin.find(CustomResourceDefinition, { name: crd.metadata.name });
  if (current) await admin.update(CustomResourceDefinition, { ...current, spec: crd.spec } as never);
  else await admin.create(CustomResourceDefinition, crd as never);
  await waitFor('the Memcached CRD to be served', () => admin.list(Memcached.kind).then(() => true));

  const names = Array.from({ length: COUNT }, (_, i) => `mc-${i}`);
  const want = new Map(names.map((n) => [n, 1]));
  const uids = new Map<string, string>();
  for (const name of names)
    uids.set(name, (await admin.create(Memcached.kind, { metadata: { name, namespace: ns }, spec: { replicas: 1 } } as never)).metadata.uid!);
  return {
    run: {
      name: 'memcached-operator',
      leaseNamespace: ns,
      replicas,
      // Sharded: a write to a Memcached, its Deployment or its Service sits where the Memcached's uid hashes.
      sharded: o.sharded
        ? {
            placeOf: (e) => {
              const ref = e.objectRef;
              const uid =
                ref?.namespace === ns && ['memcacheds', 'deployments', 'services'].includes(ref.resource ?? '') ? uids.get(ref.name ?? '') : undefined;
              return uid === undefined ? undefined : shardHash(uid);
            },
          }
        : undefined,
      manager: (r) => ({ namespaces: [ns], webhook: webhooks[r]!.options }),
      install: (manager) => void addMemcachedOperator(manager),
      // Each object rescaled every 4 s (one every 500 ms in turn), between 1 and 3 replicas.
      churn: async (i) => {
        const name = names[i % COUNT]!;
        const replicas = 1 + ((i >> 3) % 3);
        await admin.patch(Memcached.kind, { namespace: ns, name }, { spec: { replicas } });
        want.set(name, replicas);
      },
      churnIntervalMs: 500,
      converged: async () => {
        const lagging = (await admin.list(Memcached.kind, { namespace: ns })).items.filter((m) => {
          const size = want.get(m.metadata.name!);
          return !(
            m.status?.readyReplicas === size &&
            m.status?.observedGeneration === m.metadata.generation &&
            m.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True')
          );
        });
        if (!lagging.length) return true;
        const say = (m: (typeof lagging)[number]) =>
          `${m.metadata.name} want ${want.get(m.metadata.name!)} gen ${m.metadata.generation} ${JSON.stringify(m.status)}`;
        throw new Error(`${lagging.length} not converged, e.g. ${lagging.slice(0, 2).map(say).join('; ')}`);
      },
    },
    // Each object is rescaled 15 times a minute, and each rescale writes the Deployment and a status
    // or three as the pods come up (readyReplicas climbs): the soak measured 58 to 62 a minute to one
    // status over 2 minutes of churn (seeds 1 to 3; a 20 s run sees a third of a minute's). Twice
    // that catches a retry storm (one write per failed request would be hundreds).
    maxWritesPerObjectPerMinute: 120,
  };
}
