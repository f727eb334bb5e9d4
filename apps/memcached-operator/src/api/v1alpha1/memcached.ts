import { Conditions, defineCustomResource, ResourceRequirements, type Cached } from '@opkit/runtime';
import { Type } from '@sinclair/typebox';

/** The memcached image when spec.image is empty: pinned, never a moving tag. */
export const DEFAULT_IMAGE = 'memcached:1.6.38-alpine';
export const FINALIZER = 'cache.opkit.dev/finalizer';

export const MemcachedSpec = Type.Object({
  size: Type.Integer({ minimum: 0, maximum: 1000, default: 1, description: 'Number of memcached pods. Also settable with `kubectl scale`.' }),
  image: Type.String({ minLength: 1, default: DEFAULT_IMAGE, description: 'The memcached image.' }),
  resources: Type.Optional(ResourceRequirements),
  memoryLimitMB: Type.Integer({ minimum: 1, maximum: 1048576, default: 64, description: 'Memory for items in megabytes (memcached -m).' }),
  port: Type.Integer({ minimum: 1, maximum: 65535, default: 11211, description: 'TCP port memcached listens on.' }),
  extraArgs: Type.Optional(Type.Array(Type.String(), { maxItems: 64, description: 'More memcached command-line arguments.' })),
  progressDeadlineSeconds: Type.Integer({ minimum: 1, default: 600, description: 'How long a rollout may make no progress before the Memcached is Degraded.' }),
});

export const MemcachedStatus = Type.Object({
  nodes: Type.Optional(Type.Array(Type.String(), { description: 'Names of the memcached pods.' })),
  replicas: Type.Optional(Type.Integer({ description: 'Pods the Deployment has (for the scale subresource).' })),
  readyReplicas: Type.Optional(Type.Integer({ description: 'Pods that are ready to serve.' })),
  selector: Type.Optional(Type.String({ description: 'Label selector of the pods (for the scale subresource).' })),
  phase: Type.Optional(
    Type.Union([Type.Literal('Pending'), Type.Literal('Progressing'), Type.Literal('Available'), Type.Literal('Degraded'), Type.Literal('Deleting')], {
      description: 'Pending, Progressing (a rollout or scaling is under way), Available, Degraded (see the conditions for why) or Deleting.',
    }),
  ),
  observedGeneration: Type.Optional(Type.Integer({ description: 'The metadata.generation this status was computed from.' })),
  conditions: Type.Optional(Conditions),
});

/** What every version of the Memcached API shares: its names, scope and description. */
export const MEMCACHED_NAMES = {
  group: 'cache.opkit.dev',
  kind: 'Memcached',
  plural: 'memcacheds',
  shortNames: ['mc'],
  categories: ['opkit'],
  scope: 'Namespaced',
  description: 'A memcached cluster: a Deployment of memcached pods behind a headless Service.',
} as const;

/** Columns every version shows after its own size column. */
export const STATUS_COLUMNS = [
  { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas' },
  { name: 'Status', type: 'string', jsonPath: '.status.phase' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
] as const;

export const Memcached = defineCustomResource({
  ...MEMCACHED_NAMES,
  shortNames: [...MEMCACHED_NAMES.shortNames],
  categories: [...MEMCACHED_NAMES.categories],
  version: 'v1alpha1',
  spec: MemcachedSpec,
  status: MemcachedStatus,
  scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' },
  printerColumns: [{ name: 'Size', type: 'integer', jsonPath: '.spec.size' }, ...STATUS_COLUMNS],
});

/** As the cache holds it (name and namespace always set); see Cached. */
export type MemcachedObject = Cached<NonNullable<(typeof Memcached.kind)['__type']>>;
