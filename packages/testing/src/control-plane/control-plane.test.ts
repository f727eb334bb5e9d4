import { ApiextensionsV1Api, CoreV1Api, CustomObjectsApi, Watch } from '@kubernetes/client-node';
import { build } from 'esbuild';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../wait.js';
import { startControlPlane, type ControlPlane } from './control-plane.js';
import { processAlive as alive } from '../process/alive.js';

const crd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.test.opkit.dev' },
  spec: {
    group: 'test.opkit.dev',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    scope: 'Namespaced',
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: { type: 'object', properties: { size: { type: 'integer', minimum: 0 } } },
              status: { type: 'object', properties: { phase: { type: 'string' } } },
            },
          },
        },
      },
    ],
  },
};
const gvp = { group: 'test.opkit.dev', version: 'v1', plural: 'widgets' };

describe('a plain control plane (etcd + kube-apiserver)', () => {
  let plane: ControlPlane;
  beforeAll(async () => {
    plane = await startControlPlane();
    console.log(`plain control plane started in ${plane.timings.total} ms`, plane.timings);
  });
  afterAll(() => plane?.stop());

  it('serves securely, authenticates the admin and authorizes with RBAC', async () => {
    expect(plane.server).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const anonymous = await fetch(`${plane.server}/api/v1/namespaces`).catch((e: Error) => e);
    // TLS with our own CA: an unconfigured client cannot even connect.
    expect(anonymous).toBeInstanceOf(Error);
    const who = await plane.kubectl(['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']);
    expect(who.stdout).toBe('admin');
    const nobody = await plane.userCredentials('nobody');
    const core = nobody.kubeConfig.makeApiClient(CoreV1Api);
    await expect(core.listNamespace()).rejects.toMatchObject({ code: 403 });
  });

  it('installs a CRD, then creates, watches, updates status and deletes a custom resource', async () => {
    const ext = plane.kubeConfig.makeApiClient(ApiextensionsV1Api);
    await ext.createCustomResourceDefinition({ body: crd });
    await waitFor('the CRD to be established', async () => {
      const got = await ext.readCustomResourceDefinition({ name: crd.metadata.name });
      return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    });

    // A brand-new resource answers watches with 429 until its watch cache is initialized; a client
    // must retry, as this one does.
    const seen: string[] = [];
    let watch: AbortController | undefined;
    await waitFor('a watch on the new resource', async () => {
      const ended = new Promise<unknown>((resolve) => {
        void new Watch(plane.kubeConfig)
          .watch(
            '/apis/test.opkit.dev/v1/namespaces/default/widgets',
            {},
            (phase, obj) => seen.push(`${phase} ${obj.metadata.name} ${obj.status?.phase ?? '-'}`),
            resolve,
          )
          .then((w) => (watch = w), resolve);
      });
      const outcome = await Promise.race([ended, new Promise((r) => setTimeout(() => r('open'), 500))]);
      return outcome === 'open';
    });
    const api = plane.kubeConfig.makeApiClient(CustomObjectsApi);
    await api.createNamespacedCustomObject({
      ...gvp,
      namespace: 'default',
      body: { apiVersion: 'test.opkit.dev/v1', kind: 'Widget', metadata: { name: 'w1' }, spec: { size: 1 } },
    });
    await expect(
      api.createNamespacedCustomObject({
        ...gvp,
        namespace: 'default',
        body: { apiVersion: 'test.opkit.dev/v1', kind: 'Widget', metadata: { name: 'bad' }, spec: { size: -1 } },
      }),
    ).rejects.toMatchObject({ code: 422 });

    const current = (await api.getNamespacedCustomObject({ ...gvp, namespace: 'default', name: 'w1' })) as { metadata: { resourceVersion: string } };
    await api.replaceNamespacedCustomObjectStatus({
      ...gvp,
      namespace: 'default',
      name: 'w1',
      body: {
        apiVersion: 'test.opkit.dev/v1',
        kind: 'Widget',
        metadata: { name: 'w1', resourceVersion: current.metadata.resourceVersion },
        status: { phase: 'Ready' },
      },
    });
    await api.deleteNamespacedCustomObject({ ...gvp, namespace: 'default', name: 'w1' });
    await waitFor('the watch to see create, status update and delete', () => seen.length >= 3 && seen, { timeoutMs: 10_000 });
    watch?.abort();
    expect(seen).toEqual(['ADDED w1 -', 'MODIFIED w1 Ready', 'DELETED w1 Ready']);
  });

  it('records every request in the audit log when asked', async () => {
    const audited = await startControlPlane({ audit: true });
    try {
      const since = new Date();
      await audited.kubectl(['create', 'namespace', 'audited']);
      const writes = audited.audit!.writes({ user: 'admin', since, resource: 'namespaces' });
      expect(writes.map((w) => `${w.verb} ${w.objectRef?.name}`)).toEqual(['create audited']);
    } finally {
      await audited.stop();
    }
  });
});

describe('isolation and cleanup', () => {
  it('runs two control planes at once without collisions', async () => {
    const [a, b] = await Promise.all([startControlPlane(), startControlPlane()]);
    try {
      expect(a.server).not.toBe(b.server);
      expect(a.etcd.clientUrl).not.toBe(b.etcd.clientUrl);
      await a.kubectl(['create', 'namespace', 'only-in-a']);
      await expect(b.kubectl(['get', 'namespace', 'only-in-a'])).rejects.toThrow(/NotFound|not found/);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('stop() ends every process and removes every directory', async () => {
    const plane = await startControlPlane();
    const pids = [plane.etcd.process!.pid!, plane.apiServer.process!.pid!];
    await plane.stop();
    expect(pids.filter(alive)).toEqual([]);
    expect(existsSync(plane.dir)).toBe(false);
  });

  it('leaves no orphaned etcd or kube-apiserver when the test process is killed', async () => {
    // A separate process starts a plane and is then SIGKILLed, as a crashed or interrupted run
    // would be; its watchdog must clean up after it.
    const work = mkdtempSync(join(tmpdir(), 'opkit-crash-'));
    try {
      const entry = join(work, 'crash.ts');
      // Bundled next to the package so its external dependencies resolve from node_modules.
      const bundle = join(import.meta.dirname, `../../test-output/crash-${process.pid}.mjs`);
      const { writeFileSync } = await import('node:fs');
      writeFileSync(
        entry,
        `import { startControlPlane } from ${JSON.stringify(join(import.meta.dirname, 'control-plane.ts'))};
         const p = await startControlPlane();
         process.stdout.write(JSON.stringify({ pids: [p.etcd.process.pid, p.apiServer.process.pid], dir: p.dir }) + '\\n');
         setInterval(() => {}, 1000);`,
      );
      await build({ entryPoints: [entry], bundle: true, platform: 'node', format: 'esm', outfile: bundle, packages: 'external', logLevel: 'error' });
      const child = spawn(process.execPath, [bundle], { stdio: ['ignore', 'pipe', 'inherit'], cwd: join(import.meta.dirname, '..') });
      const started = await new Promise<{ pids: number[]; dir: string }>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d) => {
          out += d;
          if (out.includes('\n')) resolve(JSON.parse(out.slice(0, out.indexOf('\n'))));
        });
        child.on('exit', (code) => reject(new Error(`child exited early with ${code}`)));
      });
      expect(started.pids.every(alive)).toBe(true);
      child.kill('SIGKILL');
      await waitFor('the watchdog to stop etcd and kube-apiserver', () => started.pids.every((p) => !alive(p)), { timeoutMs: 20_000 });
      await waitFor('the watchdog to remove the working directory', () => !existsSync(started.dir), { timeoutMs: 10_000 });
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});
