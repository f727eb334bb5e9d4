import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { MemcachedObject } from '../../api/v1beta1/memcached.js';
import { podSummary } from './pod-summary.js';
import { computeStatus } from './status.js';

const now = new Date('2026-06-01T12:00:00Z');
const mc: MemcachedObject = {
  metadata: { name: 'cache', namespace: 'shop', generation: 4 },
  spec: { replicas: 3, image: 'memcached:1.6.38-alpine', memoryLimitMB: 64, port: 11211, progressDeadlineSeconds: 600 },
};
const dep = {
  metadata: { name: 'cache', generation: 2 },
  spec: { replicas: 3, selector: {}, template: {} },
  status: { observedGeneration: 2, replicas: 3, readyReplicas: 2, updatedReplicas: 3 },
} as never;

/** A running pod as the API server sends it: spec, status, every container's state. */
const state = fc.oneof(
  fc.constant({ running: { startedAt: '2026-06-01T11:00:00Z' } }),
  fc.record({
    waiting: fc.record({
      reason: fc.constantFrom('ImagePullBackOff', 'ErrImagePull', 'CrashLoopBackOff', 'ContainerCreating', 'PodInitializing'),
      message: fc.string({ maxLength: 40 }),
    }),
  }),
  fc.constant({ terminated: { exitCode: 1, reason: 'Error' } }),
);
const pod = fc.record({
  name: fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/),
  deleting: fc.boolean(),
  states: fc.array(state, { minLength: 1, maxLength: 3 }),
});
const wire = (p: { name: string; deleting: boolean; states: object[] }) =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: p.name,
      namespace: 'shop',
      uid: `uid-${p.name}`,
      resourceVersion: '42',
      labels: { 'app.kubernetes.io/instance': 'cache', 'app.kubernetes.io/name': 'memcached' },
      ...(p.deleting ? { deletionTimestamp: '2026-06-01T11:59:00Z' } : {}),
    },
    spec: { containers: [{ name: 'memcached', image: 'memcached:1.6.38-alpine', args: ['-m', '64'] }], nodeName: 'node-1' },
    status: {
      phase: 'Running',
      podIP: '10.244.0.7',
      conditions: [{ type: 'Ready', status: 'True' }],
      containerStatuses: p.states.map((s, i) => ({ name: `c${i}`, image: 'memcached', imageID: 'sha256:00', ready: true, restartCount: 0, state: s })),
    },
  }) as never;

describe('podSummary (the cache transform of the operator’s pods)', () => {
  it('keeps everything the status reads: the same status from summaries as from whole pods', () => {
    fc.assert(
      fc.property(fc.array(pod, { maxLength: 6 }), (pods) => {
        const whole = pods.map(wire);
        expect(computeStatus(mc, dep, whole.map(podSummary) as never, now)).toEqual(computeStatus(mc, dep, whole as never, now));
      }),
    );
  });

  it('keeps what maps a pod to its Memcached and what the runtime reads, and drops the spec', () => {
    const s = podSummary(wire({ name: 'cache-1', deleting: false, states: [{ running: {} }] }));
    expect(s.metadata).toMatchObject({
      name: 'cache-1',
      namespace: 'shop',
      uid: 'uid-cache-1',
      resourceVersion: '42',
      labels: { 'app.kubernetes.io/instance': 'cache' },
    });
    expect(s.spec).toBeUndefined();
    expect(s.status).toEqual({});
    // A summary is a small part of the pod it stands for.
    const whole = JSON.stringify(wire({ name: 'cache-1', deleting: false, states: [{ running: {} }] }));
    expect(JSON.stringify(s).length).toBeLessThan(whole.length / 2);
  });
});
