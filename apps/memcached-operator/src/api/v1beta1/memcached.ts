import { defineCustomResource, ResourceRequirements, type Cached } from '@opkit/runtime';
import { Type } from '@sinclair/typebox';
import { DEFAULT_IMAGE, MEMCACHED_NAMES, MemcachedStatus, STATUS_COLUMNS } from '../v1alpha1/memcached.js';

export { DEFAULT_IMAGE, FINALIZER } from '../v1alpha1/memcached.js';

/**
 * v1beta1, the stored version. What changed from v1alpha1:
 * - `size` is `replicas`, the name every Kubernetes workload (and the scale subresource) uses;
 * - `threads` (memcached -t) is new; v1alpha1 cannot hold it, so a v1alpha1 client that reads and
 *   writes the object back keeps it through an annotation (see ../conversion.ts).
 */
export const MemcachedSpec = Type.Object({
  replicas: Type.Integer({ minimum: 0, maximum: 1000, default: 1, description: 'Number of memcached pods. Also settable with `kubectl scale`.' }),
  image: Type.String({ minLength: 1, default: DEFAULT_IMAGE, description: 'The memcached image.' }),
  resources: Type.Optional(ResourceRequirements),
  memoryLimitMB: Type.Integer({ minimum: 1, maximum: 1048576, default: 64, description: 'Memory for items in megabytes (memcached -m).' }),
  port: Type.Integer({ minimum: 1, maximum: 65535, default: 11211, description: 'TCP port memcached listens on.' }),
  threads: Type.Optional(Type.Integer({ minimum: 1, maximum: 64, description: "Worker threads (memcached -t); memcached's default (4) when unset." })),
  extraArgs: Type.Optional(Type.Array(Type.String(), { maxItems: 64, description: 'More memcached command-line arguments.' })),
  progressDeadlineSeconds: Type.Integer({ minimum: 1, default: 600, description: 'How long a rollout may make no progress before the Memcached is Degraded.' }),
});

export const Memcached = defineCustomResource({
  ...MEMCACHED_NAMES,
  shortNames: [...MEMCACHED_NAMES.shortNames],
  categories: [...MEMCACHED_NAMES.categories],
  version: 'v1beta1',
  spec: MemcachedSpec,
  status: MemcachedStatus,
  scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' },
  printerColumns: [{ name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' }, ...STATUS_COLUMNS],
});

/** As the cache holds it (name and namespace always set); see Cached. */
export type MemcachedObject = Cached<NonNullable<(typeof Memcached.kind)['__type']>>;
