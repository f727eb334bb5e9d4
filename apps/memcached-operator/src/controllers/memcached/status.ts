import { setCondition, type Cached, type Condition, type Deployment, type ObjectOf, type Pod } from '@opkit/runtime';
import type { MemcachedObject } from '../../api/v1beta1/memcached.js';
import { selectorString } from './labels.js';

type DeploymentObject = ObjectOf<typeof Deployment>;
type PodObject = Cached<ObjectOf<typeof Pod>>;
type MemcachedStatus = NonNullable<MemcachedObject['status']>;

/** Container states that will not resolve on their own: the spec (or the cluster) must change. */
const STUCK = new Set(['ImagePullBackOff', 'ErrImagePull', 'InvalidImageName', 'CrashLoopBackOff', 'CreateContainerConfigError', 'CreateContainerError']);

const depCondition = (d: DeploymentObject | undefined, type: string) => d?.status?.conditions?.find((c) => c.type === type);

/** Why the Memcached cannot reach its desired state, if it cannot: the Deployment's reason first. */
function degradation(dep: DeploymentObject | undefined, pods: PodObject[]): { reason: string; message: string } | undefined {
  const progressing = depCondition(dep, 'Progressing');
  if (progressing?.status === 'False') return { reason: progressing.reason ?? 'ProgressDeadlineExceeded', message: progressing.message ?? '' };
  const failure = depCondition(dep, 'ReplicaFailure');
  if (failure?.status === 'True') return { reason: failure.reason ?? 'ReplicaFailure', message: failure.message ?? '' };
  for (const pod of pods) {
    for (const cs of pod.status?.containerStatuses ?? []) {
      const waiting = cs.state?.waiting;
      if (waiting?.reason && STUCK.has(waiting.reason))
        return { reason: waiting.reason, message: `pod ${pod.metadata.name}: ${waiting.message ?? waiting.reason}` };
    }
  }
  return undefined;
}

/**
 * The status a Memcached should show, derived from its Deployment and pods. Pure: the same inputs
 * give the same status (transition times included), so an unchanged world causes no status write.
 */
export function computeStatus(mc: MemcachedObject, dep: DeploymentObject | undefined, pods: PodObject[], now = new Date()): MemcachedStatus {
  const size = mc.spec.replicas;
  const generation = mc.metadata.generation;
  const s = dep?.status ?? {};
  const ready = s.readyReplicas ?? 0;
  const updated = s.updatedReplicas ?? 0;
  const current = !!dep && (s.observedGeneration ?? 0) >= (dep.metadata.generation ?? 0) && dep.spec?.replicas === size;
  const rolledOut = current && updated === size && (s.replicas ?? 0) === size && (s.availableReplicas ?? 0) >= size;
  const broken = degradation(dep, pods);
  let conditions: Condition[] = (mc.status?.conditions as Condition[] | undefined) ?? [];
  const set = (c: Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>) =>
    (conditions = setCondition(conditions, { ...c, observedGeneration: generation }, now));

  const available = size === 0 || (current && ready >= size);
  set(
    size === 0
      ? { type: 'Available', status: 'True', reason: 'ScaledToZero', message: 'replicas is 0: no pods requested' }
      : available
        ? { type: 'Available', status: 'True', reason: 'AllPodsReady', message: `${ready}/${size} pods ready` }
        : {
            type: 'Available',
            status: 'False',
            reason: dep ? 'PodsNotReady' : 'DeploymentMissing',
            message: dep ? `${ready}/${size} pods ready` : 'the Deployment does not exist yet',
          },
  );
  set(
    rolledOut
      ? { type: 'Progressing', status: 'False', reason: 'RolloutComplete', message: `${size} pods run the current spec` }
      : {
          type: 'Progressing',
          status: 'True',
          reason: depCondition(dep, 'Progressing')?.reason ?? 'Reconciling',
          message: `${updated}/${size} pods updated, ${ready} ready`,
        },
  );
  set(broken ? { type: 'Degraded', status: 'True', ...broken } : { type: 'Degraded', status: 'False', reason: 'AsExpected', message: 'no failures' });

  const nodes = pods
    .filter((p) => !p.metadata.deletionTimestamp)
    .map((p) => p.metadata.name)
    .sort();
  return {
    nodes,
    replicas: s.replicas ?? 0,
    readyReplicas: ready,
    selector: selectorString(mc.metadata.name),
    phase: broken ? 'Degraded' : !rolledOut ? 'Progressing' : available ? 'Available' : 'Pending',
    observedGeneration: generation,
    conditions,
  };
}

/**
 * The status while reconciles fail (the operator cannot write what the spec asks: a verb missing
 * from its role, a webhook refusing): every field says so, Available and Degraded with the API's
 * reason and words, and the phase. What the pods are doing is left as the last reconcile saw it.
 */
export function failureStatus(mc: MemcachedObject, failure: { reason: string; message: string }, now = new Date()): MemcachedStatus {
  const generation = mc.metadata.generation;
  let conditions: Condition[] = (mc.status?.conditions as Condition[] | undefined) ?? [];
  for (const c of [
    { type: 'Available', status: 'False' as const, ...failure },
    { type: 'Degraded', status: 'True' as const, ...failure },
  ])
    conditions = setCondition(conditions, { ...c, observedGeneration: generation }, now);
  return { ...mc.status, phase: 'Degraded', conditions };
}
