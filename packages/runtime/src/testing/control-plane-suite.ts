import { startControlPlane, type ControlPlane, type ControlPlaneOptions } from '@opkit/testing';
import { afterAll, beforeAll } from 'vitest';
import { Client } from '../client/client.js';
import { Transport } from '../client/transport.js';

/**
 * For the runtime's own integration suites: one real control plane per file, started before its
 * tests and stopped after them, with an admin client. (Not exported: it registers vitest hooks.)
 */
export function useControlPlane(options: ControlPlaneOptions = {}, setup: (plane: ControlPlane, admin: Client) => Promise<void> = async () => undefined) {
  const suite = {} as { plane: ControlPlane; admin: Client };
  beforeAll(async () => {
    suite.plane = await startControlPlane(options);
    suite.admin = new Client(new Transport(suite.plane.kubeConfig), { fieldManager: 'test-admin' });
    await setup(suite.plane, suite.admin);
  });
  afterAll(async () => {
    suite.plane?.apiServer.thaw();
    await suite.plane?.stop();
  });
  return suite;
}
