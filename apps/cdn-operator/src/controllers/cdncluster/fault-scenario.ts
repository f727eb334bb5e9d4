import { Client, ConfigMap, CustomResourceDefinition, Service, Transport } from '@opkit/runtime';
import type { FaultScenario } from '@opkit/runtime/testing/faults';
import { waitFor, type ControlPlane } from '@opkit/testing';
import { CdnCluster, type CdnClusterObject } from '../../api/v1/cdncluster.js';
import { cdnClusterController } from './controller.js';

const CACHES = ['cache-a', 'cache-b', 'cache-c'];
const BALANCERS = ['edge-1', 'edge-2'];

/** What the admin asked for last: replicas per cache, and which caches each balancer routes to. */
interface Want {
  replicas: Map<string, number>;
  sources: Map<string, string[]>;
}

const balancer = (name: string, sources: string[]) => ({
  apiVersion: 'cdn.opkit.dev/v1',
  kind: 'CdnCluster',
  metadata: { name },
  spec: { role: 'balancer', replicas: 1, sources: sources.map((s) => ({ name: s, pathCondition: `^/${s}/` })) },
});

/**
 * The cdn operator under faults: two replicas while an admin rescales three caches and reroutes two
 * balancers between them. Converged: every cluster runs its current generation, and each
 * balancer's nginx configuration routes to exactly the caches it names, at their Services' addresses.
 */
export async function cdnFaultScenario(plane: ControlPlane, ns: string): Promise<FaultScenario> {
  const admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
  if (!(await admin.find(CustomResourceDefinition, { name: CdnCluster.crd.metadata.name })))
    await admin.create(CustomResourceDefinition, CdnCluster.crd as never);
  await waitFor('the CdnCluster CRD to be served', () => admin.list(CdnCluster.kind).then(() => true));
  await plane.kubectl(['create', 'namespace', ns]);
  const want: Want = { replicas: new Map(CACHES.map((c) => [c, 1])), sources: new Map(BALANCERS.map((b) => [b, CACHES.slice(0, 2)])) };
  const apply = (obj: object) => plane.kubectl(['apply', '-n', ns, '-f', '-'], { input: JSON.stringify(obj) });
  for (const c of CACHES)
    await apply({
      apiVersion: 'cdn.opkit.dev/v1',
      kind: 'CdnCluster',
      metadata: { name: c },
      spec: { role: 'cache', replicas: 1, origin: `http://${c}.origin.example.com` },
    });
  for (const b of BALANCERS) await apply(balancer(b, want.sources.get(b)!));

  return {
    run: {
      name: 'cdn-operator',
      leaseNamespace: ns,
      manager: () => ({ namespaces: [ns] }),
      install: (manager) => void manager.add(cdnClusterController({ resolver: '10.96.0.10' })),
      // In turn: a cache rescaled (1 to 3), then a balancer rerouted to two of the three caches.
      churn: async (i) => {
        if (i % 2 === 0) {
          const cache = CACHES[(i >> 1) % CACHES.length]!;
          const replicas = 1 + ((i >> 2) % 3);
          await admin.patch(CdnCluster.kind, { namespace: ns, name: cache }, { spec: { replicas } });
          want.replicas.set(cache, replicas);
        } else {
          const b = BALANCERS[(i >> 1) % BALANCERS.length]!;
          const skip = (i >> 2) % CACHES.length;
          const sources = CACHES.filter((_, k) => k !== skip);
          await apply(balancer(b, sources));
          want.sources.set(b, sources);
        }
      },
      churnIntervalMs: 500,
      converged: async () => {
        const lagging: string[] = [];
        const all = (await admin.list(CdnCluster.kind, { namespace: ns })).items as CdnClusterObject[];
        for (const c of all) {
          const name = c.metadata.name!;
          const s = c.status;
          if (s?.state !== 'Running' || s.observedGeneration !== c.metadata.generation)
            lagging.push(`${name}: ${s?.state} gen ${s?.observedGeneration}/${c.metadata.generation}`);
          else if (want.replicas.has(name) && s.readyReplicas !== want.replicas.get(name))
            lagging.push(`${name}: ${s.readyReplicas} ready, want ${want.replicas.get(name)}`);
        }
        const ips = new Map(await Promise.all(CACHES.map(async (c) => [c, (await admin.get(Service, { namespace: ns, name: c })).spec?.clusterIP] as const)));
        for (const b of BALANCERS) {
          const conf = (await admin.find(ConfigMap, { namespace: ns, name: `${b}-nginx` }))?.data?.['nginx.conf'] ?? '';
          for (const c of CACHES) {
            const ip = ips.get(c);
            const routed = conf.includes(`server ${ip}:80`);
            if (routed !== want.sources.get(b)!.includes(c)) lagging.push(`${b}: ${routed ? 'still routes' : 'does not route'} to ${c}`);
          }
        }
        if (!lagging.length) return true;
        throw new Error(`not converged: ${lagging.join('; ')}`);
      },
    },
    // A balancer is rerouted every 2 s and follows its caches' rescales (its upstreams' readiness):
    // each change writes its status as it rolls out (Deploying, then Running, its pods' readiness).
    // The soak measured 121 to 136 a minute to a balancer's status over 2 minutes of churn (seeds 1
    // to 3; a 20 s run sees a third of a minute's); twice that catches a retry storm.
    maxWritesPerObjectPerMinute: 270,
  };
}
