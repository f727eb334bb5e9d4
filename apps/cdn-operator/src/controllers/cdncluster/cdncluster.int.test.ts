import { Client, ConfigMap, CoreEvent, CustomResourceDefinition, Deployment, Service, Transport, type Manager } from '@opkit/runtime';
import { testManager } from '@opkit/runtime/testing';
import { startControlPlane, waitFor, type ControlPlane } from '@opkit/testing';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { CdnCluster, type CdnClusterObject } from '../../api/v1/cdncluster.js';
import { CONFIG_HASH_ANNOTATION } from './labels.js';
import { cdnClusterController } from './controller.js';

const OPERATOR = 'cdn-operator';
const samples = parseAllDocuments(readFileSync(join(import.meta.dirname, '../../../examples/cdnclusters.yaml'), 'utf8')).map(
  (d) => d.toJSON() as CdnClusterObject,
);
const sample = (name: string) => samples.find((s) => s.metadata.name === name)!;

describe('the CdnCluster controller in a simulated cluster', () => {
  let plane: ControlPlane;
  let admin: Client;
  let manager: Manager | undefined;
  let nsCount = 0;

  const startOperator = async () => {
    const { manager: m } = testManager(plane.kubeConfig, { name: OPERATOR });
    m.add(cdnClusterController({ resolver: '10.96.0.10' }));
    await m.start();
    return m;
  };
  // JSON, not YAML: kubectl reads YAML 1.1, where a cluster named `y` or `n` is a boolean.
  const apply = (ns: string, obj: object) => plane.kubectl(['apply', '-n', ns, '-f', '-'], { input: JSON.stringify(obj) });
  const get = (ns: string, name: string) => admin.get(CdnCluster.kind, { namespace: ns, name });
  const state = async (ns: string, name: string) => (await admin.find(CdnCluster.kind, { namespace: ns, name }))?.status?.state;
  const config = async (ns: string, name: string) => (await admin.find(ConfigMap, { namespace: ns, name: `${name}-nginx` }))?.data?.['nginx.conf'];
  const events = async (ns: string, name: string) => (await admin.list(CoreEvent, { namespace: ns, fieldSelector: `involvedObject.name=${name}` })).items;
  const freshNamespace = async () => {
    const ns = `cdn${++nsCount}`;
    await plane.kubectl(['create', 'namespace', ns]);
    await waitFor('the default ServiceAccount', () => plane.kubectl(['get', 'serviceaccount', 'default', '-n', ns]).then(() => true));
    return ns;
  };
  const waitState = (ns: string, name: string, want: string, timeoutMs = 60_000) =>
    waitFor(
      `${name} to be ${want}`,
      async () => {
        const s = await state(ns, name);
        return s === want ? s : false;
      },
      { timeoutMs },
    );

  beforeAll(async () => {
    plane = await startControlPlane({ nodes: 2, audit: true });
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
    await admin.create(CustomResourceDefinition, CdnCluster.crd as never);
    await waitFor('the CdnCluster CRD to be served', () => admin.list(CdnCluster.kind).then(() => true));
    manager = await startOperator();
  });
  afterAll(async () => {
    await manager?.stop();
    await plane?.stop();
  });

  it('waits for sources applied in the wrong order, then deploys the balancer with both routes', async () => {
    const ns = await freshNamespace();
    await apply(ns, sample('balancer'));
    await waitState(ns, 'balancer', 'WaitingSource');
    const waiting = await get(ns, 'balancer');
    expect(waiting.status?.conditions?.find((c) => c.type === 'SourcesReady')).toMatchObject({
      status: 'False',
      reason: 'SourceNotFound',
      message: 'not found: cache-live, cache-vod',
    });
    // The recorder writes Events beside the status, not before it: wait for both.
    const notFound = await waitFor('both SourceNotFound events', async () => {
      const m = (await events(ns, 'balancer'))
        .filter((e) => e.reason === 'SourceNotFound')
        .map((e) => e.message)
        .sort();
      return m.length >= 2 && m;
    });
    expect(notFound).toEqual(['Source cache-live not found, will retry later', 'Source cache-vod not found, will retry later']);
    expect(await admin.find(Deployment, { namespace: ns, name: 'balancer' })).toBeUndefined();
    expect(await config(ns, 'balancer')).toBeUndefined();

    await apply(ns, sample('cache-live'));
    await apply(ns, sample('cache-vod'));
    for (const name of ['cache-live', 'cache-vod', 'balancer']) await waitState(ns, name, 'Running');
    const conf = (await config(ns, 'balancer'))!;
    const live = await admin.get(Service, { namespace: ns, name: 'cache-live' });
    const vod = await admin.get(Service, { namespace: ns, name: 'cache-vod' });
    expect(conf).toContain(`server ${live.spec!.clusterIP}:80 max_conns=1024;`);
    expect(conf).toContain(`server ${vod.spec!.clusterIP}:80 max_conns=512;`);
    expect(conf).toMatch(/location ~ "\^\/live\/" \{\n\s+proxy_pass http:\/\/src_cache_live;/);
    expect(conf).toMatch(/location ~ "\^\/vod\/" \{\n\s+proxy_pass http:\/\/src_cache_vod;/);
    const balancer = await get(ns, 'balancer');
    expect(balancer.status?.upstreams).toEqual([
      { name: 'cache-live', pathCondition: '^/live/', address: `${live.spec!.clusterIP}:80`, ready: true },
      { name: 'cache-vod', pathCondition: '^/vod/', address: `${vod.spec!.clusterIP}:80`, ready: true },
    ]);
    // Its origin is named by host: resolved per request through the cluster DNS, not at nginx's start.
    expect(await config(ns, 'cache-live')).toMatch(
      /resolver 10.96.0.10 valid=30s ipv6=off;[\s\S]*set \$origin_host_port "live-origin.example.com:80";\n\s+proxy_pass http:\/\/\$origin_host_port\$request_uri;/,
    );
    const columns = await plane.kubectl(['get', 'cdn', '-n', ns, '--no-headers', '--sort-by=.metadata.name']);
    expect(
      columns.stdout
        .trim()
        .split('\n')
        .map((l) => l.split(/\s+/).slice(0, 4)),
    ).toEqual([
      ['balancer', 'balancer', 'Running', 'cache-live,cache-vod'],
      ['cache-live', 'cache', 'Running', 'origin'],
      ['cache-vod', 'cache', 'Running', 'origin'],
    ]);
  });

  it("follows a changed source: the balancer's configuration and pods roll", async () => {
    const ns = await freshNamespace();
    for (const s of samples) await apply(ns, s);
    await waitState(ns, 'balancer', 'Running');
    const hashBefore = (await admin.get(Deployment, { namespace: ns, name: 'balancer' })).spec!.template.metadata!.annotations![CONFIG_HASH_ANNOTATION];
    await apply(ns, { ...sample('cache-vod'), spec: { ...sample('cache-vod').spec, replicas: 3 } });
    await waitFor("the balancer to give cache-vod three replicas' capacity", async () => (await config(ns, 'balancer'))?.includes('max_conns=1536;'), {
      timeoutMs: 30_000,
    });
    const hashAfter = await waitFor('the balancer pods to roll', async () => {
      const h = (await admin.get(Deployment, { namespace: ns, name: 'balancer' })).spec!.template.metadata!.annotations![CONFIG_HASH_ANNOTATION];
      return h !== hashBefore && h;
    });
    await waitFor('the balancer to run the new configuration', async () => {
      const b = await get(ns, 'balancer');
      return b.status?.state === 'Running' && b.status.configHash === hashAfter;
    });
  });

  it('keeps a running balancer deployed when a source is deleted, and reports Degraded', async () => {
    const ns = await freshNamespace();
    for (const s of samples) await apply(ns, s);
    await waitState(ns, 'balancer', 'Running');
    const depUid = (await admin.get(Deployment, { namespace: ns, name: 'balancer' })).metadata.uid;
    await plane.kubectl(['delete', 'cdn', 'cache-vod', '-n', ns]);
    await waitState(ns, 'balancer', 'Degraded', 30_000);
    const b = await get(ns, 'balancer');
    expect(b.status?.message).toBe('lost source(s): cache-vod; their routes answer 503 until they return');
    expect(b.status?.upstreams?.find((u) => u.name === 'cache-vod')).toEqual({ name: 'cache-vod', pathCondition: '^/vod/', ready: false });
    expect((await admin.get(Deployment, { namespace: ns, name: 'balancer' })).metadata.uid).toBe(depUid);
    const conf = (await config(ns, 'balancer'))!;
    expect(conf).toContain('proxy_pass http://src_cache_live;');
    expect(conf).toContain('return 503 "source cache-vod is unavailable\\n";');
    await waitFor('the SourceLost warning', async () => (await events(ns, 'balancer')).some((e) => e.reason === 'SourceLost' && e.type === 'Warning'));

    await apply(ns, sample('cache-vod'));
    await waitState(ns, 'balancer', 'Running', 60_000);
  });

  it('detects dependency cycles, names them, and deploys nothing for their members', async () => {
    const ns = await freshNamespace();
    const cluster = (name: string, sources: string[]) => ({
      apiVersion: 'cdn.opkit.dev/v1',
      kind: 'CdnCluster',
      metadata: { name },
      spec: { role: 'cache', sources: sources.map((s) => ({ name: s })) },
    });
    await apply(ns, cluster('a', ['b']));
    await apply(ns, cluster('b', ['a']));
    await waitState(ns, 'a', 'Error');
    await waitState(ns, 'b', 'Error');
    expect((await get(ns, 'a')).status?.message).toBe('dependency cycle: a → b → a');
    expect((await get(ns, 'a')).status?.conditions?.find((c) => c.type === 'SourcesReady')?.reason).toBe('DependencyCycle');

    await apply(ns, cluster('x', ['y']));
    await apply(ns, cluster('y', ['z']));
    await apply(ns, cluster('z', ['x']));
    await waitFor('the three-cluster cycle', async () => (await get(ns, 'y')).status?.message === 'dependency cycle: y → z → x → y');
    expect((await admin.list(Deployment, { namespace: ns })).items).toEqual([]);
    // Events are sent after the status write, and x is reconciled on its own: wait for its event.
    await waitFor('the DependencyCycle event on x', async () => (await events(ns, 'x')).some((e) => e.reason === 'DependencyCycle'));

    // Breaking the cycle releases its members.
    await apply(ns, { ...cluster('b', []), spec: { role: 'cache', origin: 'http://origin.example.com' } });
    await waitState(ns, 'b', 'Running');
    await waitState(ns, 'a', 'Running');
  });

  it('refuses an invalid pathCondition and keeps the last good configuration running', async () => {
    const ns = await freshNamespace();
    for (const s of samples) await apply(ns, s);
    await waitState(ns, 'balancer', 'Running');
    const before = await config(ns, 'balancer');
    const bad = {
      ...sample('balancer'),
      spec: {
        ...sample('balancer').spec,
        sources: [
          { name: 'cache-live', pathCondition: '^/live/(' },
          { name: 'cache-vod', pathCondition: '^/vod/' },
        ],
      },
    };
    await apply(ns, bad);
    const b = await waitFor('ConfigValid=False', async () => {
      const c = await get(ns, 'balancer');
      return c.status?.conditions?.find((x) => x.type === 'ConfigValid')?.status === 'False' && c;
    });
    expect(b.status?.conditions?.find((x) => x.type === 'ConfigValid')?.message).toMatch(
      /^source cache-live: pathCondition "\^\/live\/\(" is not a valid regular expression/,
    );
    expect(b.status?.state).toBe('Degraded');
    expect(await config(ns, 'balancer')).toBe(before);
    expect((await admin.get(Deployment, { namespace: ns, name: 'balancer' })).status?.readyReplicas).toBe(2);
  });

  it('accepts absent, null and empty sources, and refuses what the schema can tell is wrong', async () => {
    const ns = await freshNamespace();
    const cache = (name: string, extra: object) => ({
      apiVersion: 'cdn.opkit.dev/v1',
      kind: 'CdnCluster',
      metadata: { name },
      spec: { role: 'cache', origin: 'http://origin.example.com', ...extra },
    });
    await apply(ns, cache('absent', {}));
    await apply(ns, cache('null', { sources: null }));
    await apply(ns, cache('empty', { sources: [] }));
    for (const n of ['absent', 'null', 'empty']) await waitState(ns, n, 'Running');
    const refused = (obj: object) =>
      apply(ns, obj).then(
        () => '',
        (e: Error) => e.message,
      );
    expect(await refused({ ...cache('bad-role', {}), spec: { role: 'router' } })).toMatch(
      /spec.role: Unsupported value: "router": supported values: "balancer", "cache"/,
    );
    expect(await refused(cache('bad-name', { sources: [{ name: 'Cache_Live' }] }))).toMatch(/spec.sources\[0\].name in body should match/);
    expect(await refused(cache('two-defaults', { sources: [{ name: 'a' }, { name: 'b' }] }))).toMatch(/at most one source may omit pathCondition/);
    expect(
      await refused(
        cache('dupes', {
          sources: [
            { name: 'a', pathCondition: '^/x' },
            { name: 'a', pathCondition: '^/y' },
          ],
        }),
      ),
    ).toMatch(/source names must be unique/);
    // A tenant's extremes stop at the API server: thousands of sources, an expression of pages.
    const many = Array.from({ length: 5000 }, (_, i) => ({ name: `s${i}`, pathCondition: `^/${i}/` }));
    expect(await refused(cache('thousands', { sources: many }))).toMatch(/spec.sources: Too many: 5000: must have at most 32 items/);
    expect(await refused(cache('long-regex', { sources: [{ name: 'a', pathCondition: `^/${'(a|b)'.repeat(400)}` }] }))).toMatch(
      /spec.sources\[0\].pathCondition: Too long: may not be (longer|more) than 1024/,
    );
  });

  it('loses nothing and repeats nothing across an operator restart', async () => {
    const ns = await freshNamespace();
    await apply(ns, sample('balancer'));
    await waitState(ns, 'balancer', 'WaitingSource');
    // The operator is down while the sources arrive.
    await manager!.stop();
    await apply(ns, sample('cache-live'));
    await apply(ns, sample('cache-vod'));
    manager = await startOperator();
    for (const name of ['cache-live', 'cache-vod', 'balancer']) await waitState(ns, name, 'Running');

    // Once converged, another restart writes nothing: no duplicate creates, no repeated events.
    await new Promise((r) => setTimeout(r, 1_000));
    await manager.stop();
    const since = new Date();
    manager = await startOperator();
    await new Promise((r) => setTimeout(r, 3_000));
    const writes = plane.audit!.writes({ since }).filter((e) => e.userAgent?.startsWith(`${OPERATOR}/`) && e.objectRef?.namespace === ns);
    expect(writes.map((w) => `${w.verb} ${w.objectRef?.resource}/${w.objectRef?.name}`)).toEqual([]);
    expect((await events(ns, 'balancer')).filter((e) => e.reason === 'Deployed')).toHaveLength(1);
  });
});
