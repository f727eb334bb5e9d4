import { Client, CoreEvent, CustomResourceDefinition, Deployment, Pod, Service, Transport, withConversionClient, type Manager } from '@opkit/runtime';
import { localWebhooks, testManager } from '@opkit/runtime/testing';
import { INVALID_IMAGE_PREFIX, startControlPlane, waitFor, type ControlPlane } from '@opkit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { Memcached, type MemcachedObject } from '../../api/v1beta1/memcached.js';
import { Memcached as MemcachedV1alpha1 } from '../../api/v1alpha1/memcached.js';
import { MemcachedAPI } from '../../api/conversion.js';
import { addMemcachedOperator } from '../../operator.js';

const OPERATOR = 'memcached-operator';

/** Against a simulated cluster: kube-controller-manager, kube-scheduler and kwok nodes make real pods. */
describe('the memcached controller in a simulated cluster', () => {
  let plane: ControlPlane;
  let admin: Client;
  let manager: Manager;
  let ns = 0;

  let webhooks: Awaited<ReturnType<typeof localWebhooks>>;
  const startOperator = async () => {
    const { manager: m } = testManager(plane.kubeConfig, { name: OPERATOR, webhook: webhooks.options });
    addMemcachedOperator(m);
    await m.start();
    return m;
  };
  const apply = (obj: object) => plane.kubectl(['apply', '-f', '-'], { input: stringify(obj) });
  const memcached = (namespace: string, name: string, spec: Partial<MemcachedObject['spec']> = {}) =>
    apply({ apiVersion: 'cache.opkit.dev/v1beta1', kind: 'Memcached', metadata: { name, namespace }, spec });
  const get = (namespace: string, name: string) => admin.get(Memcached.kind, { namespace, name });
  const condition = (mc: Pick<MemcachedObject, 'status'>, type: string) => mc.status?.conditions?.find((c) => c.type === type);
  const freshNamespace = async () => {
    const name = `mc${++ns}`;
    await plane.kubectl(['create', 'namespace', name]);
    await waitFor('the default ServiceAccount', () => plane.kubectl(['get', 'serviceaccount', 'default', '-n', name]).then(() => true));
    return name;
  };

  beforeAll(async () => {
    plane = await startControlPlane({ nodes: 2, audit: true });
    admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'kubectl' });
    webhooks = await localWebhooks();
    // The API as it was: v1alpha1 only, and a Memcached stored in it.
    await admin.create(CustomResourceDefinition, MemcachedV1alpha1.crd as never);
    await waitFor('the v1alpha1 Memcached CRD to be served', () => admin.list(MemcachedV1alpha1.kind).then(() => true));
    await plane.kubectl(['create', 'namespace', 'legacy']);
    await admin.create(MemcachedV1alpha1.kind, {
      metadata: { namespace: 'legacy', name: 'cache', annotations: { team: 'search' } },
      spec: { size: 2 },
    } as never);
    // The upgrade: both versions, v1beta1 stored, converted by the operator's webhook (its CA injected by it).
    const crd = await admin.get(CustomResourceDefinition, { name: MemcachedAPI.crd.metadata.name });
    await admin.update(CustomResourceDefinition, { ...crd, spec: withConversionClient(MemcachedAPI.crd, { url: webhooks.url }).spec } as never);
    // Listing v1beta1 now goes through the operator's webhook (the legacy object is stored as
    // v1alpha1): the operator serves it before its own caches list, and injects its CA.
    manager = await startOperator();
    await waitFor('the Memcached CRD to be served', () => admin.list(Memcached.kind).then(() => true));
  });
  afterAll(async () => {
    await manager?.stop();
    await plane?.stop();
  });

  it('reads a v1alpha1 Memcached stored before v1beta1 existed as v1beta1, runs it, and round-trips it through v1alpha1', async () => {
    const mc = await waitFor(
      'the legacy Memcached, converted, Available with 2 pods',
      async () => {
        const m = await get('legacy', 'cache').catch(() => undefined);
        return m?.status?.phase === 'Available' && m.status.readyReplicas === 2 ? m : undefined;
      },
      { timeoutMs: 90_000 },
    );
    expect(mc).toMatchObject({
      apiVersion: 'cache.opkit.dev/v1beta1',
      metadata: { annotations: { team: 'search' } },
      spec: { replicas: 2, memoryLimitMB: 64 },
    });
    expect((await admin.get(Deployment, { namespace: 'legacy', name: 'cache' })).spec?.replicas).toBe(2);

    // A v1beta1-only field survives a client that still speaks v1alpha1 (kubectl edit of the old version).
    await admin.patch(Memcached.kind, { namespace: 'legacy', name: 'cache' }, { spec: { threads: 8 } });
    const old = await admin.get(MemcachedV1alpha1.kind, { namespace: 'legacy', name: 'cache' });
    expect(old.spec.size).toBe(2);
    // Read, change, write back in v1alpha1, as `kubectl edit` of the old version does (again on a
    // conflict: the operator writes status meanwhile).
    await waitFor('a v1alpha1 update to size 3', async () => {
      const o = await admin.get(MemcachedV1alpha1.kind, { namespace: 'legacy', name: 'cache' });
      return admin.update(MemcachedV1alpha1.kind, { ...o, spec: { ...o.spec, size: 3 } }).then(
        () => true,
        (e: Error) => (/the object has been modified/.test(e.message) ? false : Promise.reject(e)),
      );
    });
    const back = await get('legacy', 'cache');
    expect(back.spec).toMatchObject({ replicas: 3, threads: 8 });
    expect(back.metadata.annotations).toEqual({ team: 'search' });
    await waitFor(
      'the Deployment to run 3 memcached -t 8',
      async () => {
        const d = await admin.get(Deployment, { namespace: 'legacy', name: 'cache' });
        return d.spec?.replicas === 3 && d.spec.template.spec?.containers[0]?.args?.join(' ') === '-m 64 -p 11211 -t 8';
      },
      { timeoutMs: 30_000 },
    );
    // kubectl reads either version by name.
    const table = await plane.kubectl(['get', 'memcacheds.v1alpha1.cache.opkit.dev', 'cache', '-n', 'legacy', '-o', 'jsonpath={.apiVersion} {.spec.size}']);
    expect(table.stdout).toBe('cache.opkit.dev/v1alpha1 3');
    // Nothing stays stored as v1alpha1: the operator rewrote it, and the CRD says so (a later release may drop v1alpha1).
    await waitFor(
      'storedVersions trimmed to v1beta1',
      async () => (await admin.get(CustomResourceDefinition, { name: MemcachedAPI.crd.metadata.name })).status?.storedVersions?.join() === 'v1beta1',
    );
  });

  it('runs 3 replicas as 3 Running pods, lists them in status.nodes and becomes Available', async () => {
    const n = await freshNamespace();
    await memcached(n, 'cache', { replicas: 3 });
    const mc = await waitFor(
      'Available with 3 nodes',
      async () => {
        const m = await get(n, 'cache');
        return m.status?.phase === 'Available' && m.status.nodes?.length === 3 && m;
      },
      { timeoutMs: 60_000 },
    );
    const pods = (await admin.list(Pod, { namespace: n, labelSelector: 'app.kubernetes.io/instance=cache' })).items;
    expect(pods.map((p) => p.metadata.name).sort()).toEqual(mc.status!.nodes);
    expect(pods.every((p) => p.status?.phase === 'Running')).toBe(true);
    expect(condition(mc, 'Available')).toMatchObject({ status: 'True', reason: 'AllPodsReady' });
    expect(mc.status).toMatchObject({ replicas: 3, readyReplicas: 3, observedGeneration: mc.metadata.generation });
    expect(mc.metadata.finalizers).toContain('cache.opkit.dev/finalizer');

    const svc = await admin.get(Service, { namespace: n, name: 'cache' });
    expect(svc.spec?.clusterIP).toBe('None');
    expect(svc.spec?.ports?.[0]).toMatchObject({ name: 'memcached', port: 11211 });
    const dep = await admin.get(Deployment, { namespace: n, name: 'cache' });
    expect(dep.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Memcached', name: 'cache', controller: true });
    const columns = await plane.kubectl(['get', 'mc', 'cache', '-n', n, '--no-headers']);
    expect(columns.stdout).toMatch(/^cache\s+3\s+3\s+Available\s+\d+s/);
  });

  it('scales through the scale subresource (kubectl scale) and the status follows', async () => {
    const n = await freshNamespace();
    await memcached(n, 'cache', { replicas: 3 });
    await waitFor('3 ready', async () => (await get(n, 'cache')).status?.readyReplicas === 3, { timeoutMs: 60_000 });
    await plane.kubectl(['scale', 'memcached/cache', '-n', n, '--replicas=1']);
    const mc = await waitFor(
      'the status to follow the scale-down',
      async () => {
        const m = await get(n, 'cache');
        return m.spec.replicas === 1 && m.status?.nodes?.length === 1 && m.status.replicas === 1 && m.status.phase === 'Available' && m;
      },
      { timeoutMs: 60_000 },
    );
    expect((await admin.get(Deployment, { namespace: n, name: 'cache' })).spec?.replicas).toBe(1);
    const scale = JSON.parse((await plane.kubectl(['get', '--raw', `/apis/cache.opkit.dev/v1beta1/namespaces/${n}/memcacheds/cache/scale`])).stdout);
    expect(scale).toMatchObject({ spec: { replicas: 1 }, status: { replicas: 1, selector: mc.status!.selector } });
    const events = (await admin.list(CoreEvent, { namespace: n, fieldSelector: 'involvedObject.name=cache' })).items.map((e) => e.reason);
    expect(events).toEqual(expect.arrayContaining(['Created', 'Scaled']));
  });

  it('repairs drift: replicas changed by hand, a deleted Service', async () => {
    const n = await freshNamespace();
    await memcached(n, 'cache', { replicas: 2 });
    await waitFor('Available', async () => (await get(n, 'cache')).status?.phase === 'Available', { timeoutMs: 60_000 });
    await plane.kubectl(['scale', 'deployment/cache', '-n', n, '--replicas=5']);
    await waitFor('replicas repaired to 2', async () => (await admin.get(Deployment, { namespace: n, name: 'cache' })).spec?.replicas === 2, {
      timeoutMs: 30_000,
    });
    const before = await admin.get(Service, { namespace: n, name: 'cache' });
    await admin.delete(Service, { namespace: n, name: 'cache' });
    const after = await waitFor(
      'the Service to be recreated',
      async () => {
        const s = await admin.find(Service, { namespace: n, name: 'cache' });
        return s && s.metadata.uid !== before.metadata.uid && s;
      },
      { timeoutMs: 30_000 },
    );
    expect(after.spec?.clusterIP).toBe('None');
  });

  it('rolls out a changed image, args and resources', async () => {
    const n = await freshNamespace();
    await memcached(n, 'cache', { replicas: 2 });
    await waitFor('Available', async () => (await get(n, 'cache')).status?.phase === 'Available', { timeoutMs: 60_000 });
    const oldPods = (await get(n, 'cache')).status!.nodes!;
    await memcached(n, 'cache', { replicas: 2, image: 'memcached:1.6.39-alpine', extraArgs: ['-v'], resources: { limits: { memory: '128Mi' } } });
    const mc = await waitFor(
      'new pods at the new spec',
      async () => {
        const m = await get(n, 'cache');
        return (
          m.status?.phase === 'Available' &&
          m.status.observedGeneration === m.metadata.generation &&
          m.status.nodes?.length === 2 &&
          !m.status.nodes.some((p) => oldPods.includes(p)) &&
          m
        );
      },
      { timeoutMs: 60_000 },
    );
    const pod = await admin.get(Pod, { namespace: n, name: mc.status!.nodes![0]! });
    expect(pod.spec?.containers[0]).toMatchObject({
      image: 'memcached:1.6.39-alpine',
      args: ['-m', '64', '-p', '11211', '-v'],
      resources: { limits: { memory: '128Mi' } },
    });
  });

  it('writes nothing when it reconciles an unchanged Memcached again', async () => {
    const n = await freshNamespace();
    await memcached(n, 'cache', { replicas: 2 });
    await waitFor('Available', async () => (await get(n, 'cache')).status?.phase === 'Available', { timeoutMs: 60_000 });
    await new Promise((r) => setTimeout(r, 2_000)); // let pod status churn settle
    // A fresh operator process reconciles every object once it has listed them.
    await manager.stop();
    const since = new Date();
    manager = await startOperator();
    await new Promise((r) => setTimeout(r, 3_000));
    const writes = plane.audit!.writes({ since }).filter((e) => e.userAgent?.startsWith(`${OPERATOR}/`) && e.objectRef?.namespace === n);
    expect(writes.map((w) => `${w.verb} ${w.objectRef?.resource}/${w.objectRef?.subresource ?? ''}`)).toEqual([]);
  });

  it("refuses invalid Memcacheds with the API server's explanation", async () => {
    const n = await freshNamespace();
    const refuse = (spec: object) =>
      memcached(n, 'bad', spec as never).then(
        () => '',
        (e: Error) => e.message,
      );
    expect(await refuse({ replicas: -1 })).toMatch(/spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0/);
    expect(await refuse({ replicas: 'three' })).toMatch(/spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"/);
    expect(await refuse({ replicas: 1, sise: 2 })).toMatch(/unknown field "spec.sise"/);
    expect(await refuse({ port: 70000 })).toMatch(/spec.port: Invalid value: 70000: spec.port in body should be less than or equal to 65535/);
    // A tenant's extremes stop at the API server: a billion pods, a terabyte and more of items.
    expect(await refuse({ replicas: 1_000_000_000 })).toMatch(/spec.replicas in body should be less than or equal to 1000/);
    expect(await refuse({ memoryLimitMB: 2 ** 31 })).toMatch(/spec.memoryLimitMB in body should be less than or equal to 1048576/);
    expect(await refuse({ extraArgs: Array.from({ length: 10_000 }, () => '-v') })).toMatch(/spec.extraArgs: Too many: 10000: must have at most 64 items/);
  });

  it("shows Degraded with the Deployment's reason when the image cannot be pulled", async () => {
    const n = await freshNamespace();
    await memcached(n, 'broken', { replicas: 1, image: `${INVALID_IMAGE_PREFIX}memcached:nope`, progressDeadlineSeconds: 5 });
    const mc = await waitFor(
      'Degraded: ProgressDeadlineExceeded',
      async () => {
        const m = await get(n, 'broken');
        return condition(m, 'Degraded')?.reason === 'ProgressDeadlineExceeded' && m;
      },
      { timeoutMs: 60_000 },
    );
    expect(mc.status?.phase).toBe('Degraded');
    expect(condition(mc, 'Degraded')).toMatchObject({ status: 'True', message: expect.stringMatching(/has timed out progressing/) });
    const warnings = (await admin.list(CoreEvent, { namespace: n, fieldSelector: 'involvedObject.name=broken,type=Warning' })).items.map((e) => e.reason);
    expect(warnings).toContain('ImagePullBackOff');
  });

  it('shows Degraded when a quota refuses its pods', async () => {
    const n = await freshNamespace();
    await apply({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'pods', namespace: n }, spec: { hard: { pods: '1' } } });
    await memcached(n, 'big', { replicas: 3 });
    const mc = await waitFor(
      'Degraded: FailedCreate',
      async () => {
        const m = await get(n, 'big');
        return condition(m, 'Degraded')?.reason === 'FailedCreate' && m;
      },
      { timeoutMs: 60_000 },
    );
    expect(condition(mc, 'Degraded')?.message).toMatch(/exceeded quota: pods/);
  });

  it('runs the finalizer and removes everything it made when the Memcached is deleted', async () => {
    const n = await freshNamespace();
    await memcached(n, 'cache', { replicas: 2 });
    await waitFor('Available', async () => (await get(n, 'cache')).status?.phase === 'Available', { timeoutMs: 60_000 });
    await plane.kubectl(['delete', 'memcached', 'cache', '-n', n, '--wait=true', '--timeout=60s']);
    await waitFor(
      'the Deployment, Service and pods to be gone',
      async () => {
        const [d, s, p] = await Promise.all([
          admin.find(Deployment, { namespace: n, name: 'cache' }),
          admin.find(Service, { namespace: n, name: 'cache' }),
          admin.list(Pod, { namespace: n, labelSelector: 'app.kubernetes.io/instance=cache' }),
        ]);
        return !d && !s && p.items.length === 0;
      },
      { timeoutMs: 60_000 },
    );
    const deleting = await waitFor(
      'the Deleting event',
      async () => (await admin.list(CoreEvent, { namespace: n, fieldSelector: 'involvedObject.name=cache,reason=Deleting' })).items[0],
    );
    expect(deleting.message).toBe(`Custom Resource cache is being deleted from the namespace ${n}`);
  });
});
