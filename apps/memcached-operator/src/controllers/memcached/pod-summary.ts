import type { ObjectOf, Pod } from '@opkit/runtime';

type PodObject = ObjectOf<typeof Pod>;

/**
 * What the operator holds of each of its pods: what the status (status.ts) and the mapping to a
 * Memcached (controller.ts) read, nothing else. Its pods are most of its cache (two or three per
 * Memcached), and a running pod is mostly spec and status nobody here reads: a cache transform
 * (docs/runtime.md, "Memory guards") trims each one before it is held.
 *
 * Kept: the metadata the runtime and the reconcile read (name, namespace, uid, resourceVersion,
 * labels, owner references, deletionTimestamp) and the containers that wait, with why.
 */
export function podSummary(pod: PodObject): PodObject {
  const { name, namespace, uid, resourceVersion, labels, ownerReferences, deletionTimestamp, creationTimestamp } = pod.metadata;
  const waiting = (pod.status?.containerStatuses ?? [])
    .filter((cs) => cs.state?.waiting)
    .map((cs) => ({ name: cs.name, state: { waiting: cs.state!.waiting } }));
  return {
    apiVersion: pod.apiVersion,
    kind: pod.kind,
    metadata: { name, namespace, uid, resourceVersion, labels, ownerReferences, deletionTimestamp, creationTimestamp },
    status: waiting.length ? { containerStatuses: waiting as never } : {},
  } as PodObject;
}
