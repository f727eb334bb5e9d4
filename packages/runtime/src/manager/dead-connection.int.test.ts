import { waitFor } from '@opkit/testing';
import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '../client/client.js';
import { ConfigMap, Namespace } from '../client/kind.js';
import { Transport } from '../client/transport.js';
import { useControlPlane } from '../testing/control-plane-suite.js';
import { recordingManager } from '../testing/harness.js';
import type { Manager } from './manager.js';

/** Dropping packets needs root, iptables and ss; elsewhere this suite says why and skips. */
const iptables = (() => {
  if (process.getuid?.() !== 0) return 'not root';
  for (const [tool, args] of [
    ['iptables', ['-S', 'INPUT']],
    ['ss', ['-V']],
  ] as const) {
    try {
      execFileSync(tool, args, { stdio: 'ignore' });
    } catch {
      return `no usable ${tool}`;
    }
  }
  return undefined;
})();
if (iptables) console.log(`dead-connection suite skipped: ${iptables}`);

/**
 * A connection that dies without a word: a NAT entry or a load balancer forgets it, packets stop,
 * nothing is closed. Simulated by dropping every packet the API server sends on this process's
 * open connections (new connections still work). Only TCP keep-alive can notice; the liveness probe
 * is turned off here to show that it does, within 30 s.
 */
describe.skipIf(!!iptables)('a connection that silently dies', () => {
  const suite = useControlPlane();
  let manager: Manager | undefined;
  const rules: string[][] = [];
  afterEach(async () => {
    for (const r of rules.splice(0)) execFileSync('iptables', ['-D', ...r]);
    await manager?.stop();
  });

  /** Local ports of this process's established connections to the API server. */
  const ourConnections = (apiPort: string): string[] => {
    const out = execFileSync('ss', ['-tnpH', 'state', 'established', `( dport = :${apiPort} )`]).toString();
    return out
      .split('\n')
      .filter((l) => l.includes(`pid=${process.pid},`))
      .map((l) => /:(\d+)\s+\S+:\d+\s+users:/.exec(l)?.[1])
      .filter((p): p is string => !!p);
  };

  it('is replaced within 30 s by TCP keep-alive, and no change is lost', async () => {
    await suite.admin.create(Namespace, { metadata: { name: 'partition' } });
    await suite.admin.create(ConfigMap, { metadata: { name: 'a', namespace: 'partition' }, data: { v: '1' } });
    const { manager: m, state: seen } = recordingManager(suite.plane.kubeConfig, 'partition', { liveness: { intervalMs: 3_600_000 } });
    manager = m;
    await manager.start();
    await waitFor('the initial state', () => seen.get('a') === '1');

    const apiPort = new URL(suite.plane.server).port;
    const ports = ourConnections(apiPort);
    expect(ports.length).toBeGreaterThan(0);
    for (const local of ports) {
      const rule = ['INPUT', '-p', 'tcp', '-s', '127.0.0.1', '--sport', apiPort, '--dport', local, '-j', 'DROP'];
      execFileSync('iptables', ['-I', ...rule]);
      rules.push(rule);
    }
    const cutAt = Date.now();
    // A fresh client: the test's own pooled connections are cut too.
    const admin = new Client(new Transport(suite.plane.kubeConfig), { fieldManager: 'test-admin' });
    await admin.patch(ConfigMap, { namespace: 'partition', name: 'a' }, { data: { v: '2' } });
    await waitFor('the change to arrive over a new watch', () => seen.get('a') === '2', { timeoutMs: 60_000, intervalMs: 100 });
    const after = Date.now() - cutAt;
    console.log(`a silently dead watch replaced and the change reconciled ${after} ms after the cut`);
    expect(after).toBeLessThanOrEqual(30_000);
  });
});
