// What the informer cache costs per object, against the object's JSON size.
import {
  Cache,
  Client,
  ConfigMap,
  CustomResourceDefinition,
  Namespace,
  Secret,
  Transport,
  defineCustomResource,
  silentLogger,
  type Kind,
  type KubeObject,
} from '@opkit/runtime';
import { startControlPlane } from '@opkit/testing';
import { Type } from '@sinclair/typebox';
import { mib, settledHeap, table } from '../report.js';

const Widget = defineCustomResource({
  group: 'bench.opkit.dev',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  scope: 'Namespaced',
  spec: Type.Object({ size: Type.Integer(), image: Type.String(), args: Type.Array(Type.String()) }),
  status: Type.Object({ nodes: Type.Optional(Type.Array(Type.String())), conditions: Type.Optional(Type.Array(Type.Unknown())) }),
});

async function createMany(n: number, make: (i: number) => Promise<unknown>) {
  for (let i = 0; i < n; i += 50) await Promise.all(Array.from({ length: Math.min(50, n - i) }, (_, j) => make(i + j)));
}

async function measure<T extends KubeObject>(transport: Transport, kind: Kind<T>, n: number, namespace: string, opts: { metadataOnly?: boolean } = {}) {
  // The same objects as the API server sends them: JSON size with and without managedFields.
  const list = await transport.request<{ items: KubeObject[] }>({
    method: 'GET',
    path: `${kind.group ? `/apis/${kind.group}` : '/api'}/${kind.version}/namespaces/${namespace}/${kind.plural}`,
  });
  const wire = list.items.reduce((s, o) => s + JSON.stringify(o).length, 0) / list.items.length;
  const stripped =
    list.items.reduce((s, o) => s + JSON.stringify({ ...o, metadata: { ...o.metadata, managedFields: undefined } }).length, 0) / list.items.length;
  (list as { items?: unknown }).items = undefined;
  const before = await settledHeap();
  const cache = new Cache(transport, silentLogger(), { namespaces: [namespace] });
  cache.start();
  await cache.list(kind, {}, opts.metadataOnly ? { metadataOnly: true } : undefined);
  const after = await settledHeap();
  const perObject = (after - before) / n;
  await cache.stop();
  return {
    kind: `${kind.kind}${opts.metadataOnly ? ' (metadata only)' : ''}`,
    objects: n,
    'JSON bytes (as sent)': Math.round(wire),
    'JSON bytes (no managedFields)': Math.round(stripped),
    'heap bytes/object': Math.round(perObject),
    'heap ÷ JSON as sent': Math.round((perObject / wire) * 100) / 100,
    'cache MiB': mib(after - before),
  };
}

async function main() {
  const plane = await startControlPlane();
  try {
    const transport = new Transport(plane.kubeConfig);
    const client = new Client(transport, { fieldManager: 'bench' });
    await client.create(CustomResourceDefinition, Widget.crd as never);
    await client.create(Namespace, { metadata: { name: 'mem' } });
    for (let i = 0; i < 50 && !(await client.list(Widget.kind, { namespace: 'mem' }).catch(() => undefined)); i++) await new Promise((r) => setTimeout(r, 100));
    const N = 2_000;
    console.log(`creating ${N} ConfigMaps, ${N} Widgets and ${N} Secrets…`);
    await createMany(N, (i) =>
      client.create(ConfigMap, {
        metadata: { name: `cm-${i}`, namespace: 'mem', labels: { app: 'bench', index: String(i) } },
        data: { config: `key=${i}\n`.repeat(20) },
      }),
    );
    await createMany(N, async (i) => {
      const w = await client.create(Widget.kind, {
        metadata: { name: `w-${i}`, namespace: 'mem', labels: { app: 'bench' } },
        spec: { size: 3, image: 'memcached:1.6.38-alpine', args: ['-m', '64', '-v'] },
      });
      await client.updateStatus(Widget.kind, {
        ...w,
        status: {
          nodes: [`w-${i}-a`, `w-${i}-b`, `w-${i}-c`],
          conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'ok', lastTransitionTime: '2026-01-01T00:00:00Z' }],
        },
      });
    });
    await createMany(N, (i) =>
      client.create(Secret, {
        metadata: { name: `s-${i}`, namespace: 'mem' },
        type: 'kubernetes.io/tls',
        stringData: { 'tls.crt': 'C'.repeat(1200), 'tls.key': 'K'.repeat(240) },
      }),
    );
    const rows = [];
    rows.push(await measure(transport, ConfigMap, N, 'mem'));
    rows.push(await measure(transport, Widget.kind, N, 'mem'));
    rows.push(await measure(transport, Secret, N, 'mem'));
    rows.push(await measure(transport, Secret, N, 'mem', { metadataOnly: true }));
    table(rows);
    console.log("target: cache cost per object <= 2x the object's JSON size (managedFields are stripped before caching)");
  } finally {
    await plane.stop();
  }
}
void main();
