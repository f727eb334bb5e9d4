import { defineVersionedResource, spoke } from '@opkit/runtime';
import { Memcached as MemcachedV1alpha1 } from './v1alpha1/memcached.js';
import { Memcached as MemcachedV1beta1 } from './v1beta1/memcached.js';

/**
 * Where a v1alpha1 copy of a Memcached keeps what only v1beta1 can say (`threads`), so that a
 * v1alpha1 client reading and writing the object back loses nothing.
 */
export const THREADS_ANNOTATION = 'cache.opkit.dev/v1beta1-threads';

/**
 * Metadata with these annotations. Without the field the runtime would carry the input's over
 * (metadata a conversion leaves out is kept), so it stays when it empties: only an object that
 * had no annotations comes out without the field.
 */
function withAnnotations<M extends { annotations?: Record<string, string> }>(metadata: M, annotations: Record<string, string>): M {
  const { annotations: _, ...rest } = metadata;
  return (Object.keys(annotations).length || metadata.annotations ? { ...rest, annotations } : rest) as M;
}

/**
 * The Memcached API: v1beta1 stored (the hub), v1alpha1 still served and converted by the
 * operator's webhook. Objects stored as v1alpha1 before v1beta1 existed stay stored so until they
 * are next written; any client reads them in either version.
 */
export const MemcachedAPI = defineVersionedResource(MemcachedV1beta1, [
  spoke(MemcachedV1alpha1, MemcachedV1beta1, {
    deprecated: true,
    toHub: ({ metadata, spec, status, ...rest }) => {
      const { [THREADS_ANNOTATION]: threads, ...annotations } = metadata.annotations ?? {};
      const { size, ...same } = spec;
      const t = Number(threads);
      return {
        ...rest,
        metadata: withAnnotations(metadata, annotations),
        spec: { ...same, replicas: size, ...(Number.isInteger(t) && t >= 1 && t <= 64 ? { threads: t } : {}) },
        status,
      };
    },
    fromHub: ({ metadata, spec, status, ...rest }) => {
      const { replicas, threads, ...same } = spec;
      const annotations = { ...metadata.annotations };
      if (threads !== undefined) annotations[THREADS_ANNOTATION] = String(threads);
      return {
        ...rest,
        metadata: withAnnotations(metadata, annotations),
        spec: { ...same, size: replicas },
        status,
      };
    },
  }),
]);
