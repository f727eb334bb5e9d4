import { Converter } from '@opkit/runtime';
import { conversionRoundTrips } from '@opkit/runtime/testing';
import { describe, expect, it } from 'vitest';
import { MemcachedAPI, THREADS_ANNOTATION } from './conversion.js';

const converter = new Converter();
converter.add(MemcachedAPI);
const meta = { name: 'cache', namespace: 'apps', uid: 'u1', resourceVersion: '7', generation: 3 };
const alpha = {
  apiVersion: 'cache.opkit.dev/v1alpha1',
  kind: 'Memcached',
  metadata: meta,
  spec: { size: 3, image: 'memcached:1.6', memoryLimitMB: 128, port: 11211, progressDeadlineSeconds: 600 },
  status: { readyReplicas: 3 },
};

describe('Memcached conversion', () => {
  it('renames size to replicas going up, and back going down', () => {
    const beta = converter.convert(alpha, 'cache.opkit.dev/v1beta1');
    expect(beta).toEqual({
      ...alpha,
      apiVersion: 'cache.opkit.dev/v1beta1',
      spec: { replicas: 3, image: 'memcached:1.6', memoryLimitMB: 128, port: 11211, progressDeadlineSeconds: 600 },
    });
    expect(converter.convert(beta, 'cache.opkit.dev/v1alpha1')).toEqual(alpha);
  });

  it('keeps threads through a v1alpha1 round trip in an annotation, and drops the annotation going up', () => {
    const beta = {
      ...alpha,
      apiVersion: 'cache.opkit.dev/v1beta1',
      spec: { replicas: 2, image: 'm', memoryLimitMB: 64, port: 11211, progressDeadlineSeconds: 600, threads: 8 },
    };
    const down = converter.convert(beta, 'cache.opkit.dev/v1alpha1') as typeof alpha;
    expect(down.metadata).toMatchObject({ annotations: { [THREADS_ANNOTATION]: '8' } });
    expect(down.spec).not.toHaveProperty('threads');
    const edited: typeof alpha = { ...down, spec: { ...down.spec, size: 5 } };
    const up = converter.convert(edited, 'cache.opkit.dev/v1beta1') as typeof beta;
    expect(up.spec).toMatchObject({ replicas: 5, threads: 8 });
    expect((up.metadata as { annotations?: Record<string, string> }).annotations).toEqual({});
  });

  it('loses nothing, labels and annotations included, for a client of either version', () => {
    const labelled = { ...meta, labels: { team: 'payments' }, annotations: { 'example.com/pager': 'alice' } };
    const beta = {
      apiVersion: 'cache.opkit.dev/v1beta1',
      kind: 'Memcached',
      metadata: labelled,
      spec: { replicas: 2, image: 'm', memoryLimitMB: 64, port: 11211, progressDeadlineSeconds: 600, threads: 8 },
    };
    expect(conversionRoundTrips(MemcachedAPI, [{ ...alpha, metadata: labelled }, beta] as never)).toEqual([]);
  });

  it('ignores an annotation a user garbled rather than failing every read of the object', () => {
    const garbled = { ...alpha, metadata: { ...meta, annotations: { [THREADS_ANNOTATION]: 'lots', team: 'a' } } };
    const up = converter.convert(garbled, 'cache.opkit.dev/v1beta1') as { spec: Record<string, unknown>; metadata: { annotations?: Record<string, string> } };
    expect(up.spec.threads).toBeUndefined();
    expect(up.metadata.annotations).toEqual({ team: 'a' });
  });

  it('answers a ConversionReview, and fails it naming a version nobody serves', () => {
    expect(converter.review({ uid: 'r1', desiredAPIVersion: 'cache.opkit.dev/v1beta1', objects: [alpha] })).toMatchObject({
      uid: 'r1',
      result: { status: 'Success' },
      convertedObjects: [{ spec: { replicas: 3 } }],
    });
    expect(converter.review({ uid: 'r2', desiredAPIVersion: 'cache.opkit.dev/v2', objects: [alpha] })).toEqual({
      uid: 'r2',
      result: { status: 'Failure', message: expect.stringMatching(/no version v2 \(served: v1alpha1, v1beta1\)/) },
    });
  });
});
