import { describe, expect, it } from 'vitest';
import { ConfigMap, Secret } from '../client/kind.js';
import type { ClusterAccess } from '../client/kubeconfig.js';
import { controllerFor } from '../controller/builder.js';
import { silentLogger } from '../log/logger.js';
import { Manager } from './manager.js';

/** Nothing here talks to a cluster: the manager is only built and added to. */
const nowhere: ClusterAccess = {
  getCurrentCluster: () => ({ server: 'https://127.0.0.1:1' }),
  applyToHTTPSOptions: async () => undefined,
  getCurrentContext: () => 'none',
  getContextObject: () => ({ namespace: 'default' }),
};

describe('Manager.add', () => {
  it('refuses a second controller under a name already used: its metrics and /debug/queue would merge with the first', () => {
    const manager = new Manager({ name: 'm', kubeConfig: nowhere, logger: silentLogger(), processMetrics: false, environment: {} as never });
    manager.add(controllerFor(ConfigMap).reconcile(() => undefined));
    expect(() => manager.add(controllerFor(ConfigMap).reconcile(() => undefined))).toThrow(/a controller named "configmap" is already added/);
    expect(() =>
      manager.add(
        controllerFor(ConfigMap)
          .named('configmap-audit')
          .reconcile(() => undefined),
      ),
    ).not.toThrow();
    expect(() => manager.add(controllerFor(Secret).reconcile(() => undefined))).not.toThrow();
  });
});
