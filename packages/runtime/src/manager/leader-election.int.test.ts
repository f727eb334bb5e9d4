import { startControlPlane, waitFor, type ControlPlane } from '@opkit/testing';
import { build } from 'esbuild';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../client/client.js';
import { ConfigMap, Lease, Namespace } from '../client/kind.js';
import { Transport } from '../client/transport.js';
import { controllerFor } from '../controller/builder.js';
import { testManager } from '../testing/harness.js';
import type { Manager } from './manager.js';

const LEASE = { name: 'le-test', namespace: 'le' };

/** A controller that stamps each ConfigMap with the identity of the replica that reconciled it. */
const stampingController = (identity: string, onReconcile: () => void = () => undefined) =>
  controllerFor(ConfigMap).reconcile(async (req, ctx) => {
    const cm = await ctx.cache.get(ConfigMap, req);
    if (!cm || cm.metadata.annotations?.['handled-by']) return;
    onReconcile();
    await ctx.patch(ConfigMap, { namespace: req.namespace, name: req.name }, { metadata: { annotations: { 'handled-by': identity } } });
  });

describe('leader election between managers', () => {
  let plane: ControlPlane;
  let admin: Client;
  let child: ChildProcess | undefined;
  const managers: Manager[] = [];
  const handledBy = async (name: string) => (await admin.get(ConfigMap, { namespace: 'le', name })).metadata.annotations?.['handled-by'];

  beforeAll(async () => {
    plane = await startControlPlane();
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'test-admin' });
    await admin.create(Namespace, { metadata: { name: 'le' } });
  });
  afterAll(async () => {
    child?.kill('SIGKILL');
    await Promise.all(managers.map((m) => m.stop()));
    await plane?.stop();
  });

  const manager = (identity: string, onReconcile?: () => void) => {
    const { manager } = testManager(plane.kubeConfig, { namespaces: ['le'], leaderElection: { ...LEASE, identity } });
    manager.add(stampingController(identity, onReconcile));
    managers.push(manager);
    return manager;
  };

  it('lets only the leader reconcile; a killed leader is replaced within the lease duration; a stopped one hands over at once', async () => {
    // Replica A runs in its own process so it can really be killed.
    const dir = join(import.meta.dirname, '../../test-output');
    mkdirSync(dir, { recursive: true });
    const entry = join(dir, `le-child-${process.pid}.ts`);
    writeFileSync(
      entry,
      `import { KubeConfig } from '@kubernetes/client-node';
       import { testManager } from ${JSON.stringify(join(import.meta.dirname, '../testing/harness.ts'))};
       import { controllerFor } from ${JSON.stringify(join(import.meta.dirname, '../controller/builder.ts'))};
       import { ConfigMap } from ${JSON.stringify(join(import.meta.dirname, '../client/kind.ts'))};
       const kc = new KubeConfig(); kc.loadFromFile(process.argv[2]);
       const { manager } = testManager(kc, { namespaces: ['le'], leaderElection: { name: 'le-test', namespace: 'le', identity: 'replica-a' } });
       manager.add(controllerFor(ConfigMap).reconcile(async (req, ctx) => {
         const cm = await ctx.cache.get(ConfigMap, req);
         if (!cm || cm.metadata.annotations?.['handled-by']) return;
         await ctx.patch(ConfigMap, { namespace: req.namespace, name: req.name }, { metadata: { annotations: { 'handled-by': 'replica-a' } } });
       }));
       await manager.start();
       setInterval(() => process.stdout.write(manager.isLeader ? 'leading\\n' : 'standby\\n'), 200);`,
    );
    const bundle = join(dir, `le-child-${process.pid}.mjs`);
    await build({ entryPoints: [entry], bundle: true, platform: 'node', format: 'esm', outfile: bundle, packages: 'external', logLevel: 'error' });
    let childLeading = false;
    child = spawn(process.execPath, [bundle, plane.kubeconfigPath], { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout!.on('data', (d: Buffer) => (childLeading = d.toString().includes('leading')));
    await waitFor('replica A (child process) to lead', () => childLeading, { timeoutMs: 30_000 });

    let bReconciles = 0;
    const b = manager('replica-b', () => bReconciles++);
    await b.start();
    await admin.create(ConfigMap, { metadata: { name: 'first', namespace: 'le' } });
    await waitFor('the leader to handle the first object', async () => (await handledBy('first')) === 'replica-a');
    await new Promise((r) => setTimeout(r, 2_000));
    expect(b.isLeader).toBe(false);
    expect(bReconciles).toBe(0);

    // Kill A without any chance to release its lease.
    const killedAt = Date.now();
    child.kill('SIGKILL');
    await waitFor('replica B to take over', () => b.isLeader, { timeoutMs: 30_000, intervalMs: 50 });
    const takeoverMs = Date.now() - killedAt;
    console.log(`takeover after the leader was killed: ${takeoverMs} ms (lease duration 15 s, retry period 2 s)`);
    // The lease is valid for 15 s after A's last renewal, which came before the kill; B wakes when it expires
    // rather than at its next 2 s poll. The slack is for a loaded machine (the request, timers running late).
    expect(takeoverMs).toBeLessThanOrEqual(16_500);
    await admin.create(ConfigMap, { metadata: { name: 'second', namespace: 'le' } });
    await waitFor('the new leader to handle new work', async () => (await handledBy('second')) === 'replica-b');
    const lease = await admin.get(Lease, LEASE);
    expect(lease.spec?.holderIdentity).toBe('replica-b');
    expect(lease.spec?.leaseTransitions).toBe(1);
    expect(lease.spec?.renewTime).toMatch(/\.\d{6}Z$/);

    // A graceful stop releases the lease: C takes over after one retry period, not a lease duration.
    const c = manager('replica-c');
    await c.start();
    await new Promise((r) => setTimeout(r, 1_000));
    expect(c.isLeader).toBe(false);
    const stoppedAt = Date.now();
    await b.stop();
    await waitFor('replica C to take over', () => c.isLeader, { timeoutMs: 30_000, intervalMs: 50 });
    const handoverMs = Date.now() - stoppedAt;
    console.log(`handover after a graceful stop: ${handoverMs} ms`);
    expect(handoverMs).toBeLessThan(5_000);
    await admin.create(ConfigMap, { metadata: { name: 'third', namespace: 'le' } });
    await waitFor('replica C to handle new work', async () => (await handledBy('third')) === 'replica-c');
  });
});
