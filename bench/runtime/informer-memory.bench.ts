// What the informer cache costs per object, kind by kind, against the object's JSON size and
// against controller-runtime's cache holding the same objects (the Go comparator's
// `--cache-memory` mode, bench/compare/go-memcached/cache_memory.go): the kinds operators cache
// most (issue 32), each shaped as in a running cluster (statuses filled in, a Secret as the cert
// operator writes it).
//   OPKIT_BENCH_INFORMER_N=2000     objects per kind
import {
  Cache,
  Client,
  CustomResourceDefinition,
  Deployment,
  Namespace,
  Pod,
  Secret,
  ServiceAccount,
  Transport,
  silentLogger,
  type Kind,
  type KubeObject,
} from '@opkit/runtime';
import { startControlPlane, waitFor } from '@opkit/testing';
import { spawnSync } from 'node:child_process';
import { mib, runBench, settledHeap, table } from '../report.js';
import { buildGoComparator } from '../compare/go-build.js';
import { MemcachedAPI } from '../../apps/memcached-operator/src/api/conversion.js';
import { Memcached } from '../../apps/memcached-operator/src/api/v1beta1/memcached.js';
import { CERT_APIS } from '../../apps/cert-operator/src/api/index.js';

const N = Number(process.env.OPKIT_BENCH_INFORMER_N ?? 2_000);
const NS = 'mem';
const { Certificate } = CERT_APIS.opkit;
const T = '2026-11-28T10:00:00Z';

async function createMany(n: number, make: (i: number) => Promise<unknown>) {
  for (let i = 0; i < n; i += 50) await Promise.all(Array.from({ length: Math.min(50, n - i) }, (_, j) => make(i + j)));
}

const condition = (type: string, reason: string) => ({ type, status: 'True', reason, message: `${type}: ${reason}`, lastTransitionTime: T });
const memcachedLabels = (name: string) => ({
  'app.kubernetes.io/name': 'memcached',
  'app.kubernetes.io/instance': name,
  'app.kubernetes.io/managed-by': 'memcached-operator',
});
const container = (name: string) => ({
  name: 'memcached',
  image: 'memcached:1.6.38-alpine',
  args: ['-m', '64', '-p', '11211', '-o', 'modern', '-v'],
  ports: [{ name: 'memcached', containerPort: 11211, protocol: 'TCP' }],
  resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { memory: '128Mi' } },
  readinessProbe: { tcpSocket: { port: 'memcached' }, periodSeconds: 10 },
  securityContext: { runAsNonRoot: true, runAsUser: 11211, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
  env: [{ name: 'MEMCACHED_INSTANCE', value: name }],
});

/** The objects, each kind made and its status written as its controller would. */
const makers: Record<string, (client: Client, i: number) => Promise<unknown>> = {
  memcacheds: async (client, i) => {
    const m = await client.create(Memcached.kind, { metadata: { name: `mc-${i}`, namespace: NS }, spec: { replicas: 2 } } as never);
    await client.updateStatus(Memcached.kind, {
      ...m,
      status: {
        nodes: [`mc-${i}-7d9f8b6c5d-abcde`, `mc-${i}-7d9f8b6c5d-fghij`],
        replicas: 2,
        readyReplicas: 2,
        selector: `app.kubernetes.io/instance=mc-${i},app.kubernetes.io/name=memcached`,
        phase: 'Available',
        observedGeneration: 1,
        conditions: [condition('Available', 'MinimumReplicasAvailable'), condition('Progressing', 'NewReplicaSetAvailable')],
      },
    } as never);
  },
  deployments: async (client, i) => {
    const name = `mc-${i}`;
    const d = await client.create(Deployment, {
      metadata: { name, namespace: NS, labels: memcachedLabels(name) },
      spec: {
        replicas: 2,
        selector: { matchLabels: { 'app.kubernetes.io/name': 'memcached', 'app.kubernetes.io/instance': name } },
        template: { metadata: { labels: memcachedLabels(name) }, spec: { containers: [container(name)] } },
      },
    } as never);
    await client.updateStatus(Deployment, {
      ...d,
      status: {
        observedGeneration: 1,
        replicas: 2,
        updatedReplicas: 2,
        readyReplicas: 2,
        availableReplicas: 2,
        conditions: [
          { ...condition('Available', 'MinimumReplicasAvailable'), lastUpdateTime: T },
          { ...condition('Progressing', 'NewReplicaSetAvailable'), lastUpdateTime: T },
        ],
      },
    } as never);
  },
  pods: async (client, i) => {
    const name = `mc-${i >> 1}`;
    const p = await client.create(Pod, {
      metadata: { name: `${name}-7d9f8b6c5d-${i}`, namespace: NS, labels: { ...memcachedLabels(name), 'pod-template-hash': '7d9f8b6c5d' } },
      spec: { containers: [container(name)], nodeName: `node-${i % 20}` },
    } as never);
    await client.updateStatus(Pod, {
      ...p,
      status: {
        phase: 'Running',
        conditions: ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({
          type,
          status: 'True',
          lastTransitionTime: T,
        })),
        hostIP: `10.0.0.${i % 250}`,
        hostIPs: [{ ip: `10.0.0.${i % 250}` }],
        podIP: `10.244.${i >> 8}.${i % 256}`,
        podIPs: [{ ip: `10.244.${i >> 8}.${i % 256}` }],
        startTime: T,
        qosClass: 'Burstable',
        containerStatuses: [
          {
            name: 'memcached',
            ready: true,
            started: true,
            restartCount: 0,
            image: 'memcached:1.6.38-alpine',
            imageID: 'docker.io/library/memcached@sha256:4e6e3b5d0b5b3c2b7e3c1f1b9e5f0a9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a39',
            containerID: `containerd://${'0123456789abcdef'.repeat(4)}`,
            state: { running: { startedAt: T } },
          },
        ],
      },
    } as never);
  },
  certificates: async (client, i) => {
    const c = await client.create(Certificate.kind, {
      metadata: { name: `c-${i}`, namespace: NS },
      spec: { secretName: `c-${i}`, issuerRef: { name: 'ca' }, dnsNames: [`c-${i}.example.com`, `www.c-${i}.example.com`], privateKey: { algorithm: 'ECDSA' } },
    } as never);
    await client.updateStatus(Certificate.kind, {
      ...c,
      status: {
        conditions: [{ ...condition('Ready', 'Ready'), message: 'Certificate is up to date and has not expired', observedGeneration: 1 }],
        notBefore: T,
        notAfter: '2027-02-26T10:00:00Z',
        renewalTime: '2027-01-27T10:00:00Z',
        revision: 1,
      },
    } as never);
  },
  secrets: (client, i) =>
    client.create(Secret, {
      metadata: {
        name: `c-${i}`,
        namespace: NS,
        labels: { 'controller.cert-manager.io/fao': 'true' },
        annotations: {
          'cert-manager.io/alt-names': `c-${i}.example.com,www.c-${i}.example.com`,
          'cert-manager.io/certificate-name': `c-${i}`,
          'cert-manager.io/common-name': '',
          'cert-manager.io/ip-sans': '',
          'cert-manager.io/issuer-group': 'cert.opkit.dev',
          'cert-manager.io/issuer-kind': 'Issuer',
          'cert-manager.io/issuer-name': 'ca',
          'cert-manager.io/uri-sans': '',
        },
      },
      type: 'kubernetes.io/tls',
      // Sizes of an ECDSA P-256 leaf, its CA and key, PEM.
      stringData: { 'tls.crt': 'C'.repeat(1_400), 'ca.crt': 'A'.repeat(700), 'tls.key': 'K'.repeat(240) },
    } as never),
};

interface KindRow {
  name: string;
  kind: Kind<KubeObject>;
  metadataOnly?: boolean;
}

async function measureOpkit(transport: Transport, { kind, metadataOnly }: KindRow) {
  const list = await transport.request<{ items: KubeObject[] }>({
    method: 'GET',
    path: `${kind.group ? `/apis/${kind.group}` : '/api'}/${kind.version}/namespaces/${NS}/${kind.plural}`,
  });
  const n = list.items.length;
  const wire = list.items.reduce((s, o) => s + JSON.stringify(o).length, 0) / n;
  const stripped = list.items.reduce((s, o) => s + JSON.stringify({ ...o, metadata: { ...o.metadata, managedFields: undefined } }).length, 0) / n;
  (list as { items?: unknown }).items = undefined;
  const before = await settledHeap();
  const cache = new Cache(transport, silentLogger(), { namespaces: [NS] });
  cache.start();
  await cache.list(kind, {}, metadataOnly ? { metadataOnly: true } : undefined);
  const after = await settledHeap();
  await cache.stop();
  return { n, wire, stripped, perObject: (after - before) / n, cacheBytes: after - before };
}

/** controller-runtime's cache of the same objects, per kind: as it comes, and with managedFields stripped. */
function measureGo(bin: string, kubeconfig: string, kinds: string[], strip: boolean): Map<string, number> {
  const r = spawnSync(
    bin,
    [`--kubeconfig=${kubeconfig}`, `--cache-memory=${kinds.join(',')}`, `--cache-memory-namespace=${NS}`, `--cache-memory-strip-managed-fields=${strip}`],
    { encoding: 'utf8', env: { ...process.env, GOGC: '100' } },
  );
  if (r.status !== 0) throw new Error(`the Go comparator's --cache-memory failed: ${r.stderr}`);
  const out = new Map<string, number>();
  for (const line of r.stdout.split('\n').filter((l) => l.startsWith('{'))) {
    const { kind, heapBytesPerObject } = JSON.parse(line) as { kind: string; heapBytesPerObject: number };
    out.set(kind, heapBytesPerObject);
  }
  return out;
}

async function main() {
  const goBin = buildGoComparator('go-memcached', 'the Go comparator (controller-runtime v0.25.2)');
  const plane = await startControlPlane();
  try {
    const transport = new Transport(plane.kubeConfig);
    const client = new Client(transport, { fieldManager: 'bench' });
    await plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify(MemcachedAPI.crd) });
    for (const r of CERT_APIS.opkit.resources) await client.create(CustomResourceDefinition, r.crd as never);
    await client.create(Namespace, { metadata: { name: NS } });
    // Pods are refused until the namespace's default ServiceAccount exists (no controller manager here).
    await client.create(ServiceAccount, { metadata: { name: 'default', namespace: NS } });
    await waitFor('the CRDs served', () => Promise.all([client.list(Memcached.kind), client.list(Certificate.kind)]).then(() => true));
    for (const [name, make] of Object.entries(makers)) {
      console.log(`creating ${N} ${name}…`);
      await createMany(N, (i) => make(client, i));
    }
    const rows: (KindRow & { go: string })[] = [
      { name: 'Memcached', kind: Memcached.kind as never, go: 'memcacheds' },
      { name: 'Deployment', kind: Deployment as never, go: 'deployments' },
      { name: 'Pod', kind: Pod as never, go: 'pods' },
      { name: 'Certificate', kind: Certificate.kind as never, go: 'certificates' },
      { name: 'Secret', kind: Secret as never, go: 'secrets' },
      { name: 'Secret (metadata only)', kind: Secret as never, metadataOnly: true, go: 'secrets-metadata' },
    ];
    const goKinds = rows.map((r) => r.go);
    const goAsIs = measureGo(goBin, plane.kubeconfigPath, goKinds, false);
    const goStripped = measureGo(goBin, plane.kubeconfigPath, goKinds, true);
    const out = [];
    for (const row of rows) {
      const o = await measureOpkit(transport, row);
      const go = goStripped.get(row.go)!;
      out.push({
        kind: row.name,
        objects: o.n,
        'JSON bytes (as sent)': Math.round(o.wire),
        'JSON bytes (no managedFields)': Math.round(o.stripped),
        'opkit heap bytes/object': Math.round(o.perObject),
        'controller-runtime bytes/object': Math.round(goAsIs.get(row.go)!),
        '… with managedFields stripped': Math.round(go),
        'opkit ÷ Go (both stripped)': Math.round((o.perObject / go) * 100) / 100,
        'opkit cache MiB': mib(o.cacheBytes),
      });
    }
    table(out);
    console.log(
      'opkit strips managedFields before caching, always; controller-runtime keeps them unless the TransformStripManagedFields transform is set. The Certificate is cached by the Go side unstructured (no typed API of it there), the others typed.',
    );
  } finally {
    await plane.stop();
  }
}
runBench(main);
