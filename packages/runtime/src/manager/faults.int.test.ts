import { faultReplay } from '@opkit/testing';
import { describe, it } from 'vitest';
import { ConfigMap, Namespace } from '../client/kind.js';
import { controllerFor } from '../controller/builder.js';
import { useControlPlane } from '../testing/control-plane-suite.js';
import { assertFaultInvariants, describeFaultRun, faultSeeds, runUnderFaults } from '../testing/fault-run.js';

const COUNT = 12;

/**
 * Two replicas of an operator, each behind its own fault-injecting proxy (delays, hangs, resets,
 * throttling, 5xx, 410, too-large resourceVersions, writes applied but failed, watches cut), while
 * objects change. Once the faults stop, every change is reconciled within a bound; while they
 * last, writes stay bounded and only the replica the Lease names writes (the audit log tells).
 */
describe('two replicas behind a fault-injecting proxy', () => {
  const suite = useControlPlane({ audit: true });

  for (const seed of faultSeeds([1, 2])) {
    it(`converges once the faults stop, writes boundedly, and never writes from two replicas (seed ${seed})`, async () => {
      const ns = `faults-${seed}`;
      const replay = faultReplay(import.meta.url, seed);
      await suite.admin.create(Namespace, { metadata: { name: ns } });
      const want = new Map<string, string>();
      const report = await runUnderFaults(
        {
          plane: suite.plane,
          seed,
          name: 'faulty',
          leaseNamespace: ns,
          manager: () => ({ namespaces: [ns] }),
          // Marks each ConfigMap with the value it last saw: one write per change.
          install: (manager) =>
            void manager.add(
              controllerFor(ConfigMap).reconcile(async (req, ctx) => {
                const cm = await ctx.cache.get(ConfigMap, req);
                if (!cm) return;
                const v = cm.data?.v ?? '';
                if (cm.metadata.annotations?.seen === v) return;
                await ctx.patch(ConfigMap, req, { metadata: { annotations: { seen: v } } });
              }),
            ),
          // 12 objects, each changed every 3 s.
          churn: async (i) => {
            const name = `cm-${i % COUNT}`;
            want.set(name, String(i));
            await suite.admin.apply(ConfigMap, { metadata: { name, namespace: ns }, data: { v: String(i) } }).catch(() => want.delete(name));
          },
          converged: async () => {
            const items = (await suite.admin.list(ConfigMap, { namespace: ns })).items.filter((c) => c.metadata.name?.startsWith('cm-'));
            return items.length === want.size && items.every((c) => c.metadata.annotations?.seen === c.data?.v);
          },
        },
        replay,
      );
      console.log(describeFaultRun(report));
      // ~20 changes a minute per object, each one patch; failed writes retried may double it.
      assertFaultInvariants(report, { maxWritesPerObjectPerMinute: 50 }, replay);
    });
  }
});
