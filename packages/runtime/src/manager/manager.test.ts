import { describe, expect, it } from 'vitest';
import { ConfigMap, Secret } from '../client/kind.js';
import type { ClusterAccess } from '../client/kubeconfig.js';
import { controllerFor } from '../controller/builder.js';
import { silentLogger } from '../log/logger.js';
import { FlagError, MANAGER_FLAGS, parseFlags } from './flags.js';
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

describe('Manager.fromParsedFlags', () => {
  const options = (argv: string[], traits = {}) =>
    Manager.fromParsedFlags(
      'memcached-operator',
      parseFlags(MANAGER_FLAGS, argv).values,
      { kubeConfig: nowhere, logger: silentLogger(), environment: {} as never },
      traits,
    ).options.sharding;

  it('turns --shard into a shard ring, with what the operator allows', () => {
    expect(options(['--shard', '--shard-namespace=ops'], { selectShardsOnServer: true })).toEqual({ ring: undefined, namespace: 'ops', selectOnServer: true });
    expect(options(['--shard', '--shard-ring=cache-ring'])).toMatchObject({ ring: 'cache-ring', selectOnServer: undefined });
    expect(options([])).toBeUndefined();
  });

  it('refuses --shard beside --leader-elect, as a usage error', () => {
    expect(() => options(['--shard', '--leader-elect'])).toThrow(FlagError);
    expect(() => options(['--shard', '--leader-elect'])).toThrow(/--shard and --leader-elect are alternatives/);
  });
});
