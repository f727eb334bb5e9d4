import { assertFaultInvariants, describeFaultRun, faultSeeds, runUnderFaults } from '@opkit/runtime/testing/faults';
import { faultReplay, startControlPlane, type ControlPlane } from '@opkit/testing';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { memcachedFaultScenario } from './fault-scenario.js';

/**
 * The memcached operator, two replicas each behind a fault-injecting proxy, while an admin scales
 * its objects (fault-scenario.ts). Once the faults stop, every object converges; while they last,
 * writes per object stay bounded and only the leader writes. Then the same with three replicas in
 * a shard ring: each writes only inside the part the assignment of the moment gives it (the audit
 * log's order). The soak bench runs it for longer.
 */
describe('the memcached operator behind a fault-injecting API proxy', () => {
  let plane: ControlPlane;
  beforeAll(async () => {
    plane = await startControlPlane({ nodes: 2, audit: true });
  });
  afterAll(() => plane?.stop());

  for (const seed of faultSeeds([1, 2])) {
    it(`converges every Memcached once the faults stop, writing boundedly and only from the leader (seed ${seed})`, async () => {
      const replay = faultReplay(import.meta.url, seed);
      const scenario = await memcachedFaultScenario(plane, `faults-${seed}`);
      const report = await runUnderFaults({ ...scenario.run, plane, seed }, replay);
      console.log(describeFaultRun(report));
      assertFaultInvariants(report, scenario, replay);
    });
  }

  for (const seed of faultSeeds([3])) {
    it(`sharded across three replicas: converges every Memcached once the faults stop, no replica writing outside its part of the moment (seed ${seed})`, async () => {
      const replay = faultReplay(import.meta.url, seed);
      const scenario = await memcachedFaultScenario(plane, `sharded-faults-${seed}`, { sharded: true });
      const report = await runUnderFaults({ ...scenario.run, plane, seed }, replay);
      console.log(describeFaultRun(report));
      assertFaultInvariants(report, scenario, replay);
    });
  }
});
