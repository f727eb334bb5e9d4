import { startControlPlane, type ControlPlane } from '@opkit/testing';
import { Type } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineCustomResource } from '../crd/custom-resource.js';
import { Client } from './client.js';
import { ApiError, isAlreadyExists, isConflict, isForbidden, isInvalid, isNotFound } from './errors.js';
import { ConfigMap, CustomResourceDefinition, Namespace, ServiceAccount } from './kind.js';
import { Transport } from './transport.js';

const Gadget = defineCustomResource({
  group: 'test.opkit.dev',
  version: 'v1',
  kind: 'Gadget',
  plural: 'gadgets',
  scope: 'Namespaced',
  spec: Type.Object({ size: Type.Integer({ minimum: 0 }), color: Type.Optional(Type.String()) }),
  status: Type.Object({ phase: Type.Optional(Type.String()) }),
});

describe('Client against a real API server', () => {
  let plane: ControlPlane;
  let client: Client;
  let requests: string[];

  beforeAll(async () => {
    plane = await startControlPlane();
    requests = [];
    const transport = new Transport(plane.kubeConfig, { onResponse: (m, code) => requests.push(`${m} ${code}`) });
    client = new Client(transport, { fieldManager: 'opkit-test' });
    await client.create(CustomResourceDefinition, Gadget.crd as never);
    await client.create(Namespace, { metadata: { name: 'work' } });
    await untilServed(Gadget.kind);
  });
  afterAll(() => plane?.stop());
  // A new CRD is served a moment after it is created.
  const untilServed = async (kind: Parameters<Client['list']>[0]) => {
    for (let i = 0; i < 100 && !(await client.list(kind, { namespace: 'work' }).catch(() => undefined)); i++) await new Promise((r) => setTimeout(r, 100));
  };

  it('creates, gets, lists, updates and deletes a built-in kind', async () => {
    const created = await client.create(ConfigMap, { metadata: { name: 'cm', namespace: 'work' }, data: { a: '1' } });
    expect(created.metadata.uid).toBeTruthy();
    expect(typeof created.metadata.creationTimestamp).toBe('string'); // wire format everywhere, never Date
    const got = await client.get(ConfigMap, { namespace: 'work', name: 'cm' });
    const updated = await client.update(ConfigMap, { ...got, data: { a: '2' } });
    expect(updated.data).toEqual({ a: '2' });
    expect((await client.list(ConfigMap, { namespace: 'work' })).items.map((c) => c.metadata.name)).toContain('cm');
    await client.delete(ConfigMap, { namespace: 'work', name: 'cm' });
    expect(await client.find(ConfigMap, { namespace: 'work', name: 'cm' })).toBeUndefined();
    expect(await client.deleteIfExists(ConfigMap, { namespace: 'work', name: 'cm' })).toBe(false);
  });

  it('raises typed errors carrying the API server message', async () => {
    const e404 = await client.get(ConfigMap, { namespace: 'work', name: 'nope' }).catch((e) => e);
    expect(isNotFound(e404)).toBe(true);
    expect((e404 as ApiError).serverMessage).toBe('configmaps "nope" not found');

    await client.create(ConfigMap, { metadata: { name: 'dup', namespace: 'work' } });
    const e409 = await client.create(ConfigMap, { metadata: { name: 'dup', namespace: 'work' } }).catch((e) => e);
    expect(isAlreadyExists(e409)).toBe(true);

    const stale = await client.get(ConfigMap, { namespace: 'work', name: 'dup' });
    await client.update(ConfigMap, { ...stale, data: { v: '1' } });
    const conflict = await client.update(ConfigMap, { ...stale, data: { v: '2' } }).catch((e) => e);
    expect(isConflict(conflict)).toBe(true);
    expect((conflict as ApiError).serverMessage).toMatch(/the object has been modified/);

    const invalid = await client.create(Gadget.kind, { metadata: { name: 'neg', namespace: 'work' }, spec: { size: -1 } }).catch((e) => e);
    expect(isInvalid(invalid)).toBe(true);
    expect((invalid as ApiError).serverMessage).toMatch(/spec.size: Invalid value: -1: spec.size in body should be greater than or equal to 0/);

    const unknownField = await client
      .create(Gadget.kind, { metadata: { name: 'typo', namespace: 'work' }, spec: { size: 1, colour: 'red' } as never })
      .catch((e) => e);
    expect((unknownField as ApiError).serverMessage).toMatch(/unknown field "spec.colour"/);

    const nobody = await plane.userCredentials('nobody');
    const denied = await new Client(new Transport(nobody.kubeConfig), { fieldManager: 'x' }).list(ConfigMap, { namespace: 'work' }).catch((e) => e);
    expect(isForbidden(denied)).toBe(true);
    expect((denied as ApiError).serverMessage).toBe(
      'configmaps is forbidden: User "nobody" cannot list resource "configmaps" in API group "" in the namespace "work"',
    );
  });

  it('patches with merge, JSON and strategic merge patches', async () => {
    await client.create(ConfigMap, { metadata: { name: 'p', namespace: 'work', labels: { a: '1' } }, data: { x: '1' } });
    const key = { namespace: 'work', name: 'p' };
    expect((await client.patch(ConfigMap, key, { data: { y: '2' } }, 'merge')).data).toEqual({ x: '1', y: '2' });
    expect((await client.patch(ConfigMap, key, [{ op: 'remove', path: '/data/x' }], 'json')).data).toEqual({ y: '2' });
    expect((await client.patch(ConfigMap, key, { metadata: { labels: { b: '2' } } }, 'strategic')).metadata.labels).toEqual({ a: '1', b: '2' });
    const failedTest = await client
      .patch(
        ConfigMap,
        key,
        [
          { op: 'test', path: '/data/y', value: 'wrong' },
          { op: 'remove', path: '/data/y' },
        ],
        'json',
      )
      .catch((e) => e);
    expect(failedTest).toBeInstanceOf(ApiError);
  });

  it('server-side applies with a field manager, and forces past a conflicting manager', async () => {
    const desired = { metadata: { name: 'ssa', namespace: 'work' }, data: { owned: 'mine' } };
    const applied = await client.apply(ConfigMap, desired);
    expect(applied.metadata.managedFields?.map((f) => f.manager)).toContain('opkit-test');
    // Another manager takes the field...
    await client.apply(ConfigMap, { metadata: { name: 'ssa', namespace: 'work' }, data: { owned: 'theirs' } }, { fieldManager: 'someone-else', force: true });
    // ...so a non-forced apply of ours conflicts, and a forced one wins it back.
    const conflict = await client.apply(ConfigMap, desired).catch((e) => e);
    expect(isConflict(conflict)).toBe(true);
    expect((conflict as ApiError).serverMessage).toMatch(/conflict with "someone-else"/);
    expect((await client.apply(ConfigMap, desired, { force: true })).data).toEqual({ owned: 'mine' });
    // Fields we stop stating are removed.
    const dropped = await client.apply(ConfigMap, { metadata: { name: 'ssa', namespace: 'work' }, data: {} }, { force: true });
    expect(dropped.data ?? {}).toEqual({});
  });

  it('writes the status subresource of a custom resource separately from its spec', async () => {
    const g = await client.create(Gadget.kind, { metadata: { name: 'g', namespace: 'work' }, spec: { size: 1 } });
    const withStatus = await client.updateStatus(Gadget.kind, { ...g, spec: { size: 99 }, status: { phase: 'Ready' } });
    expect(withStatus.status).toEqual({ phase: 'Ready' });
    expect(withStatus.spec.size).toBe(1); // spec changes through /status are ignored
    expect((await client.patchStatus(Gadget.kind, { namespace: 'work', name: 'g' }, { status: { phase: 'Degraded' } })).status?.phase).toBe('Degraded');
    expect(
      (await client.applyStatus(Gadget.kind, { metadata: { name: 'g', namespace: 'work' }, status: { phase: 'Applied' } }, { force: true })).status?.phase,
    ).toBe('Applied');
    expect(withStatus.metadata.generation).toBe(1);
  });

  it('lists in pages', async () => {
    for (let i = 0; i < 7; i++) await client.create(ConfigMap, { metadata: { name: `page-${i}`, namespace: 'work', labels: { paged: 'yes' } } });
    const before = requests.length;
    const all = await client.listAll(ConfigMap, { namespace: 'work', labelSelector: 'paged=yes' }, 3);
    expect(all).toHaveLength(7);
    expect(requests.length - before).toBe(3);
  });

  it("retries a write the API server turned away unprocessed (a 503 with Retry-After), as when a new CRD's spec changes under it", async () => {
    // Each change of a CRD's spec makes the API server drop that kind's storage once the requests
    // holding it drain, and a request caught between the two is answered 503 "apiserver is
    // shutting down" with Retry-After: 1. Nothing was written, and client-go retries such an answer
    // for any verb. It comes most readily while a CRD is new, as when an operator starts beside the
    // CRD its chart just made and injects its CA into the CRD's conversion webhook: the case here,
    // repeated with new CRDs until the API server has answered so (or a minute passed).
    const codes = new Map<number, number>();
    const transport = new Transport(plane.kubeConfig, { onResponse: (_m, code) => codes.set(code, (codes.get(code) ?? 0) + 1) });
    const writer = new Client(transport, { fieldManager: 'opkit-test' });
    const failures: string[] = [];
    let created = 0;
    const until = performance.now() + 60_000;
    for (let round = 0; !codes.get(503) && performance.now() < until; round++) {
      const Sprocket = defineCustomResource({
        group: 'test.opkit.dev',
        version: 'v1',
        kind: `Sprocket${round}`,
        plural: `sprockets${round}`,
        scope: 'Namespaced',
        spec: Type.Object({ size: Type.Integer() }),
        status: Type.Object({}),
      });
      await client.create(CustomResourceDefinition, Sprocket.crd as never);
      await untilServed(Sprocket.kind);
      let changing = true;
      const changes = (async () => {
        for (let i = 0; changing; i++) {
          const crd = await client.get(CustomResourceDefinition, { name: Sprocket.crd.metadata.name });
          const version = crd.spec.versions[0]!;
          await client.update(CustomResourceDefinition, {
            ...crd,
            spec: { ...crd.spec, versions: [{ ...version, additionalPrinterColumns: [{ name: `Size${i}`, type: 'integer', jsonPath: '.spec.size' }] }] },
          });
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
      // Eight writers at once, for two seconds.
      const roundEnds = performance.now() + 2_000;
      await Promise.all(
        Array.from({ length: 8 }, async (_, lane) => {
          for (let i = 0; performance.now() < roundEnds; i++) {
            await writer
              .create(Sprocket.kind, { metadata: { name: `s${lane}-${i}`, namespace: 'work' }, spec: { size: i } })
              .then(() => created++)
              .catch((e: Error) => failures.push(e.message));
          }
        }),
      );
      changing = false;
      await changes;
    }
    console.log(`answers to ${created + failures.length} creates across CRD changes: ${JSON.stringify(Object.fromEntries(codes))}`);
    expect(codes.get(503)).toBeGreaterThan(0); // the race happened: else this test proved nothing
    expect(failures).toEqual([]);
  });

  it('limits its own request rate when asked (QPS/burst)', async () => {
    const limited = new Client(new Transport(plane.kubeConfig, { qps: 5, burst: 2 }), { fieldManager: 'x' });
    const t0 = Date.now();
    for (let i = 0; i < 7; i++) await limited.get(Namespace, { name: 'work' });
    // 2 from the burst, then 5 more at 5/s: about a second.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
  });
});

describe("opkit's own kubeconfig reading, against a real API server", () => {
  let plane: ControlPlane;
  beforeAll(async () => {
    plane = await startControlPlane();
  });
  afterAll(() => plane?.stop());

  it("authenticates with the client certificate of a kubeconfig file, and with an exec plugin's token (rotated after a 401)", async () => {
    const { chmodSync, mkdtempSync, readFileSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { parse, stringify } = await import('yaml');
    const { KubeConfig } = await import('./kubeconfig.js');
    const whoami = async (kc: InstanceType<typeof KubeConfig>) =>
      (
        await new Transport(kc).request<{ status: { userInfo: { username: string } } }>({
          method: 'POST',
          path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
          body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
        })
      ).status.userInfo.username;

    const alice = await plane.userCredentials('alice');
    expect(await whoami(KubeConfig.fromFiles([alice.kubeconfigPath]))).toBe('alice');

    // An exec plugin handing out a ServiceAccount token; the first token it gives is already revoked
    // (its ServiceAccount deleted), so the API server answers 401 and the plugin is asked again.
    const admin = new Client(new Transport(plane.kubeConfig), { fieldManager: 'test' });
    for (const name of ['gone', 'robot']) await admin.create(ServiceAccount, { metadata: { name, namespace: 'default' } });
    const gone = parse(readFileSync((await plane.serviceAccountCredentials('default', 'gone')).kubeconfigPath, 'utf8')).users[0].user.token as string;
    const robot = parse(readFileSync((await plane.serviceAccountCredentials('default', 'robot')).kubeconfigPath, 'utf8')).users[0].user.token as string;
    await admin.delete(ServiceAccount, { namespace: 'default', name: 'gone' });
    const d = mkdtempSync(join(tmpdir(), 'opkit-exec-'));
    writeFileSync(join(d, 'tokens'), `${gone}\n${robot}\n`);
    writeFileSync(
      join(d, 'plugin'),
      `#!/bin/sh\nn=$(cat ${d}/n 2>/dev/null || echo 0); n=$((n+1)); echo $n > ${d}/n\nprintf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' "$(sed -n "\${n}p" ${d}/tokens)"\n`,
    );
    chmodSync(join(d, 'plugin'), 0o755);
    const cfg = parse(readFileSync(plane.kubeconfigPath, 'utf8'));
    cfg.users = [{ name: 'exec', user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: join(d, 'plugin') } } }];
    cfg.contexts[0].context.user = 'exec';
    writeFileSync(join(d, 'config'), stringify(cfg));
    expect(await whoami(KubeConfig.fromFiles([join(d, 'config')]))).toBe('system:serviceaccount:default:robot');
    expect(readFileSync(join(d, 'n'), 'utf8').trim()).toBe('2');
  });
});
