import { Client, CustomResourceDefinition, Transport } from '@opkit/runtime';
import { assertFaultInvariants, describeFaultRun, faultSeeds, runUnderFaults } from '@opkit/runtime/testing/faults';
import {
  faultReplay,
  freePort,
  startControlPlane,
  startIngressStandIn,
  startPebble,
  waitFor,
  workspaceApp,
  type ControlPlane,
  type IngressStandIn,
  type Pebble,
} from '@opkit/testing';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { CUSTOM_RESOURCES } from '../manifests/generate.js';
import { certFaultScenario, FAULTS_SYSTEM_NAMESPACE } from './fault-scenario.js';
import { CERT_APIS } from '../api/index.js';

const { Certificate } = CERT_APIS.opkit;

const SOLVER = workspaceApp('acme-solver');

/**
 * The cert operator, two replicas each behind a fault-injecting proxy, issuing from CA and ACME
 * issuers while an admin renames certificates (fault-scenario.ts). Once the faults stop, every
 * Secret holds exactly the names asked; while they last, writes stay bounded and only the leader
 * writes. The soak bench runs it for longer.
 */
describe('the cert operator behind a fault-injecting API proxy', () => {
  let plane: ControlPlane;
  let standIn: IngressStandIn;
  let pebble: Pebble;
  let httpPort: number;
  beforeAll(async () => {
    if (!existsSync(SOLVER.bundle)) throw new Error(`${SOLVER.bundle} is missing: build it first (nx run @opkit/acme-solver:build)`);
    plane = await startControlPlane({ nodes: 1, audit: true });
    const admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
    for (const r of CUSTOM_RESOURCES) await admin.create(CustomResourceDefinition, r.crd as never);
    await waitFor('CRDs served', () => admin.list(Certificate.kind).then(() => true));
    await plane.kubectl(['create', 'namespace', FAULTS_SYSTEM_NAMESPACE]);
    httpPort = await freePort();
    standIn = await startIngressStandIn(plane.kubeConfig, { port: httpPort, images: { [SOLVER.image.repository]: SOLVER.local }, ingressClass: 'nginx' });
    pebble = await startPebble({ httpPort });
  });
  afterAll(async () => {
    await standIn?.stop();
    await pebble?.stop();
    await plane?.stop();
  });

  for (const seed of faultSeeds([1, 2])) {
    it(`issues every Certificate from CA and ACME issuers once the faults stop, writing boundedly and only from the leader (seed ${seed})`, async () => {
      const replay = faultReplay(import.meta.url, seed);
      const scenario = await certFaultScenario(plane, `faults-${seed}`, { pebble, httpPort });
      const report = await runUnderFaults({ ...scenario.run, plane, seed }, replay);
      console.log(describeFaultRun(report));
      assertFaultInvariants(report, scenario, replay);
    });
  }
});
