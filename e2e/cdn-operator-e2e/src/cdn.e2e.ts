import {
  e2eModes, helmInstall, leftovers, operatorIdentities, operatorPods, resourceVersions, restartOperator, startE2ECluster, waitFor, workspaceApp, workspaceRoot, type E2ECluster, type Release,
} from '@opkit/testing';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

const app = workspaceApp('cdn-operator');
const samples = parseAllDocuments(readFileSync(join(workspaceRoot(), 'apps/cdn-operator/examples/cdnclusters.yaml'), 'utf8')).map((d) => d.toJSON() as { metadata: { name: string } });
const sample = (name: string) => samples.find((s) => s.metadata.name === name)!;
const NS = 'edge';

interface CdnCluster {
  status?: { state?: string; message?: string; upstreams?: { name: string; address?: string; ready: boolean }[]; conditions?: { type: string; reason: string }[] };
}

for (const mode of e2eModes()) {
  describe.skipIf(!!mode.skip)(`cdn operator with helm, ${mode.name} mode${mode.skip ? ` (skipped: ${mode.skip})` : ''}`, () => {
    let cluster: E2ECluster;
    const r: Release = { release: 'cdn', namespace: 'cdn-system', app };
    const kubectl = (...args: string[]) => cluster.kubectl(args);
    // JSON, not YAML: kubectl reads YAML 1.1, where a cluster named `y` or `n` is a boolean.
    const apply = (ns: string, obj: object) => cluster.kubectl(['apply', '-n', ns, '-f', '-'], { input: JSON.stringify(obj) });
    const get = async (name: string, ns = NS) => JSON.parse((await kubectl('get', `cdncluster/${name}`, '-n', ns, '-o', 'json')).stdout) as CdnCluster;
    const waitState = (name: string, state: string, ns = NS) =>
      waitFor(`${name} to be ${state}`, async () => {
        const c = await get(name, ns);
        return c.status?.state === state && c;
      }, { timeoutMs: 120_000, intervalMs: 500 });
    const cycle = (name: string, sources: string[]) => ({ apiVersion: 'cdn.opkit.dev/v1', kind: 'CdnCluster', metadata: { name }, spec: { role: 'cache', sources: sources.map((s) => ({ name: s })) } });

    beforeAll(async () => {
      cluster = await startE2ECluster(mode.name, { apps: [app] });
      await helmInstall(cluster, r);
      await kubectl('create', 'namespace', NS);
    });
    afterAll(() => cluster?.stop());

    it('the three sample clusters applied in the wrong order all end Running, the balancer routing to both caches', async () => {
      await apply(NS, sample('balancer'));
      const waiting = await waitState('balancer', 'WaitingSource');
      expect(waiting.status?.message).toBe('waiting for sources (not found: cache-live, cache-vod)');
      await apply(NS, sample('cache-vod'));
      await apply(NS, sample('cache-live'));
      for (const name of ['cache-live', 'cache-vod', 'balancer']) await waitState(name, 'Running');
      const b = await get('balancer');
      expect(b.status?.upstreams?.map((u) => [u.name, u.ready])).toEqual([
        ['cache-live', true],
        ['cache-vod', true],
      ]);
      const conf = JSON.parse((await kubectl('get', 'configmap/balancer-nginx', '-n', NS, '-o', 'json')).stdout) as { data: Record<string, string> };
      expect(conf.data['nginx.conf']).toMatch(/location ~ "\^\/live\/" \{\n\s+proxy_pass http:\/\/src_cache_live;/);
      const who = operatorIdentities(cluster, 'cdn-operator');
      if (who) expect(who).toEqual(['system:serviceaccount:cdn-system:cdn-cdn-operator']);
      const cols = await kubectl('get', 'cdn', '-n', NS, '--no-headers', '--sort-by=.metadata.name');
      expect(cols.stdout.trim().split('\n').map((l) => l.split(/\s+/).slice(0, 3))).toEqual([
        ['balancer', 'balancer', 'Running'],
        ['cache-live', 'cache', 'Running'],
        ['cache-vod', 'cache', 'Running'],
      ]);
    });

    it('re-reconciles dependents: a source deleted makes the balancer Degraded, its return makes it Running', async () => {
      await kubectl('delete', 'cdncluster/cache-vod', '-n', NS);
      const degraded = await waitState('balancer', 'Degraded');
      expect(degraded.status?.message).toBe('lost source(s): cache-vod; their routes answer 503 until they return');
      await apply(NS, sample('cache-vod'));
      await waitState('balancer', 'Running');
    });

    it('names a dependency cycle and deploys nothing for it; breaking it releases its members', async () => {
      const ns = 'cycles';
      await kubectl('create', 'namespace', ns);
      await apply(ns, cycle('a', ['b']));
      await apply(ns, cycle('b', ['a']));
      expect((await waitState('a', 'Error', ns)).status?.message).toBe('dependency cycle: a → b → a');
      expect((await get('a', ns)).status?.conditions?.find((c) => c.type === 'SourcesReady')?.reason).toBe('DependencyCycle');
      expect(JSON.parse((await kubectl('get', 'deployments', '-n', ns, '-o', 'json')).stdout).items).toEqual([]);
      await apply(ns, { ...cycle('b', []), spec: { role: 'cache', origin: 'http://origin.example.com' } });
      await waitState('b', 'Running', ns);
      await waitState('a', 'Running', ns);
    });

    it('a restarted operator does not redo finished work', async () => {
      await new Promise((res) => setTimeout(res, 3_000));
      const kinds = ['cdnclusters', 'deployments', 'services', 'configmaps'];
      const before = await resourceVersions(cluster, kinds, [NS, 'cycles']);
      await restartOperator(cluster, r);
      await new Promise((res) => setTimeout(res, 8_000));
      expect(await resourceVersions(cluster, kinds, [NS, 'cycles'])).toEqual(before);
    });

    it('helm upgrade with changed values (one namespace watched) rolls the operator, which keeps working there', async () => {
      await helmInstall(cluster, r, { watchNamespaces: [NS], logLevel: 'debug' });
      const [pod] = await operatorPods(cluster, r);
      expect(pod.args).toContain('--log-level=debug');
      // Namespaced RBAC now: a Role in the watched namespace, no cluster-wide grant of CdnClusters.
      expect((await kubectl('get', 'roles', '-n', NS, '-l', `app.kubernetes.io/instance=${r.release}`, '-o', 'name')).stdout.trim()).not.toBe('');
      await apply(NS, { ...sample('cache-vod'), spec: { ...(sample('cache-vod') as unknown as { spec: object }).spec, replicas: 2 } });
      await waitFor('the balancer to follow cache-vod\'s new capacity', async () => {
        const conf = JSON.parse((await kubectl('get', 'configmap/balancer-nginx', '-n', NS, '-o', 'json')).stdout) as { data: Record<string, string> };
        return conf.data['nginx.conf'].includes('max_conns=1024;') && (await get('balancer')).status?.state === 'Running';
      }, { timeoutMs: 60_000 });
    });

    it('helm uninstall, after the CdnClusters are deleted, leaves nothing the operator made; the CRD is kept', async () => {
      // The operator now watches only NS: remove the other namespace's clusters while it can't
      // (no finalizers, so garbage collection alone cleans up after them).
      for (const ns of [NS, 'cycles']) await kubectl('delete', 'cdnclusters', '--all', '-n', ns, '--wait=true', '--timeout=60s');
      await cluster.helm(['uninstall', r.release, '--namespace', r.namespace, '--wait']);
      await waitFor('the operator pods gone', async () => (await operatorPods(cluster, r)).length === 0, { timeoutMs: 60_000 });
      await kubectl('get', 'crd', 'cdnclusters.cdn.opkit.dev');
      // Owned Deployments, Services and ConfigMaps go by garbage collection.
      await waitFor('nothing left', async () => (await leftovers(cluster, 'cdn-operator', ['deployments', 'services', 'configmaps', 'secrets', 'leases', 'cdnclusters'])).length === 0, { timeoutMs: 90_000 });
      expect((await cluster.kubectl(['get', 'clusterroles,clusterrolebindings', '-l', `app.kubernetes.io/instance=${r.release}`, '-o', 'name'])).stdout.trim()).toBe('');
    });
  });
}
