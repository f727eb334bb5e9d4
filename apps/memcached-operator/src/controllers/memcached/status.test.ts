import { describe, expect, it } from 'vitest';
import type { MemcachedObject } from '../../api/v1beta1/memcached.js';
import { computeStatus, failureStatus } from './status.js';

const now = new Date('2026-06-01T12:00:00Z');
const mc = (size: number, status?: MemcachedObject['status']): MemcachedObject => ({
  metadata: { name: 'cache', namespace: 'shop', generation: 4 },
  spec: { replicas: size, image: 'memcached:1.6.38-alpine', memoryLimitMB: 64, port: 11211, progressDeadlineSeconds: 600 },
  status,
});
const dep = (status: Record<string, unknown>, replicas = 3) =>
  ({ metadata: { name: 'cache', generation: 2 }, spec: { replicas, selector: {}, template: {} }, status: { observedGeneration: 2, ...status } }) as never;
const pod = (name: string, waiting?: string) =>
  ({
    metadata: { name },
    status: {
      containerStatuses: [{ name: 'memcached', state: waiting ? { waiting: { reason: waiting, message: 'Back-off pulling image "x"' } } : { running: {} } }],
    },
  }) as never;
const cond = (s: ReturnType<typeof computeStatus>, type: string) => s.conditions?.find((c) => c.type === type);

describe('computeStatus', () => {
  it('is Available once every requested pod is ready and the rollout is complete', () => {
    const s = computeStatus(mc(3), dep({ replicas: 3, readyReplicas: 3, updatedReplicas: 3, availableReplicas: 3 }), [pod('c'), pod('a'), pod('b')], now);
    expect(s).toMatchObject({
      nodes: ['a', 'b', 'c'],
      replicas: 3,
      readyReplicas: 3,
      phase: 'Available',
      observedGeneration: 4,
      selector: 'app.kubernetes.io/name=memcached,app.kubernetes.io/instance=cache',
    });
    expect(cond(s, 'Available')).toMatchObject({ status: 'True', reason: 'AllPodsReady', observedGeneration: 4 });
    expect(cond(s, 'Progressing')).toMatchObject({ status: 'False', reason: 'RolloutComplete' });
    expect(cond(s, 'Degraded')).toMatchObject({ status: 'False' });
  });

  it('is Progressing while pods come up', () => {
    const s = computeStatus(
      mc(3),
      dep({
        replicas: 3,
        readyReplicas: 1,
        updatedReplicas: 3,
        availableReplicas: 1,
        conditions: [{ type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated' }],
      }),
      [pod('a')],
      now,
    );
    expect(s.phase).toBe('Progressing');
    expect(cond(s, 'Available')).toMatchObject({ status: 'False', reason: 'PodsNotReady', message: '1/3 pods ready' });
    expect(cond(s, 'Progressing')).toMatchObject({ status: 'True', reason: 'ReplicaSetUpdated' });
  });

  it("is Degraded with the Deployment's own reason when it cannot progress", () => {
    const stuck = dep({
      replicas: 3,
      readyReplicas: 0,
      conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: 'ReplicaSet "cache-1" has timed out progressing.' }],
    });
    const s = computeStatus(mc(3), stuck, [pod('a', 'ImagePullBackOff')], now);
    expect(cond(s, 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'ProgressDeadlineExceeded',
      message: 'ReplicaSet "cache-1" has timed out progressing.',
    });
    expect(s.phase).toBe('Degraded');
    const quota = dep({ conditions: [{ type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: 'pods "x" is forbidden: exceeded quota' }] });
    expect(cond(computeStatus(mc(3), quota, [], now), 'Degraded')).toMatchObject({ reason: 'FailedCreate', message: 'pods "x" is forbidden: exceeded quota' });
  });

  it('reports stuck pods before the progress deadline', () => {
    const s = computeStatus(mc(3), dep({ replicas: 3 }), [pod('a', 'ImagePullBackOff')], now);
    expect(cond(s, 'Degraded')).toMatchObject({ status: 'True', reason: 'ImagePullBackOff', message: 'pod a: Back-off pulling image "x"' });
  });

  it('treats size 0 as available and keeps transition times when nothing changed', () => {
    const first = computeStatus(mc(0), dep({ replicas: 0 }, 0), [], now);
    expect(cond(first, 'Available')).toMatchObject({ status: 'True', reason: 'ScaledToZero' });
    const again = computeStatus(mc(0, first), dep({ replicas: 0 }, 0), [], new Date('2026-06-02T00:00:00Z'));
    expect(again).toEqual(first);
  });
});

describe('failureStatus', () => {
  it('says it fails in every field: Available false, Degraded true, phase Degraded; the pods as last seen', () => {
    const healthy = computeStatus(mc(2), dep({ replicas: 2, readyReplicas: 2, updatedReplicas: 2, availableReplicas: 2 }, 2), [pod('a'), pod('b')], now);
    expect(healthy.phase).toBe('Available');
    const failure = { reason: 'Forbidden', message: 'deployments.apps "cache" is forbidden: cannot patch' };
    const s = failureStatus(mc(2, healthy), failure, new Date('2026-06-01T12:05:00Z'));
    expect(s.phase).toBe('Degraded');
    expect(cond(s, 'Available')).toMatchObject({ status: 'False', ...failure, lastTransitionTime: '2026-06-01T12:05:00Z' });
    expect(cond(s, 'Degraded')).toMatchObject({ status: 'True', ...failure });
    expect(cond(s, 'Progressing')).toEqual(cond(healthy, 'Progressing'));
    expect([s.nodes, s.readyReplicas]).toEqual([healthy.nodes, healthy.readyReplicas]);
    expect(failureStatus(mc(2, s), failure, new Date('2026-06-01T12:09:00Z'))).toEqual(s);
  });
});
