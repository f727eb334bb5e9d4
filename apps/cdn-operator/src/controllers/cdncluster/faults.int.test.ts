import { assertFaultInvariants, describeFaultRun, faultSeeds, runUnderFaults } from '@opkit/runtime/testing/faults';
import { faultReplay, startControlPlane, type ControlPlane } from '@opkit/testing';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { cdnFaultScenario } from './fault-scenario.js';

/**
 * The cdn operator, two replicas each behind a fault-injecting proxy, while an admin rescales the
 * caches and reroutes the balancers between them (fault-scenario.ts). Once the faults stop, every
 * balancer routes to exactly its caches; while they last, writes stay bounded and only the leader
 * writes. The soak bench runs it for longer.
 */
describe('the cdn operator behind a fault-injecting API proxy', () => {
  let plane: ControlPlane;
  beforeAll(async () => {
    plane = await startControlPlane({ nodes: 2, audit: true });
  });
  afterAll(() => plane?.stop());

  for (const seed of faultSeeds([1, 2])) {
    it(`maps every balancer to its caches once the faults stop, writing boundedly and only from the leader (seed ${seed})`, async () => {
      const replay = faultReplay(import.meta.url, seed);
      const scenario = await cdnFaultScenario(plane, `faults-${seed}`);
      const report = await runUnderFaults({ ...scenario.run, plane, seed }, replay);
      console.log(describeFaultRun(report));
      assertFaultInvariants(report, scenario, replay);
    });
  }
});
