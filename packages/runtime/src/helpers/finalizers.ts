import type { Client } from '../client/client.js';
import type { Kind } from '../client/kind.js';
import type { KubeObject } from '../client/types.js';

export const hasFinalizer = (obj: KubeObject, finalizer: string): boolean => !!obj.metadata.finalizers?.includes(finalizer);

/**
 * Adds a finalizer with a JSON Patch guarded by a `test` op on the current list, so a concurrent
 * change to the list makes the patch fail (and the reconcile retry) instead of clobbering another
 * controller's finalizer. Replacing the whole list, as Pepr and dot-i do, loses such races.
 */
export async function addFinalizer<T extends KubeObject>(client: Client, kind: Kind<T>, obj: T, finalizer: string): Promise<T> {
  if (hasFinalizer(obj, finalizer)) return obj;
  const current = obj.metadata.finalizers;
  const patch = current?.length
    ? [
        { op: 'test', path: '/metadata/finalizers', value: current },
        { op: 'add', path: '/metadata/finalizers/-', value: finalizer },
      ]
    : [
        { op: 'test', path: '/metadata/resourceVersion', value: obj.metadata.resourceVersion },
        { op: 'add', path: '/metadata/finalizers', value: [finalizer] },
      ];
  return client.patch(kind, { namespace: obj.metadata.namespace, name: obj.metadata.name! }, patch, 'json');
}

/**
 * Removes a finalizer by index, guarded by a `test` that the entry at that index is still ours.
 * Removing the last finalizer of an object being deleted deletes it.
 */
export async function removeFinalizer<T extends KubeObject>(client: Client, kind: Kind<T>, obj: T, finalizer: string): Promise<T> {
  const i = obj.metadata.finalizers?.indexOf(finalizer) ?? -1;
  if (i < 0) return obj;
  const key = { namespace: obj.metadata.namespace, name: obj.metadata.name! };
  return client.patch(
    kind,
    key,
    [
      { op: 'test', path: `/metadata/finalizers/${i}`, value: finalizer },
      { op: 'remove', path: `/metadata/finalizers/${i}` },
    ],
    'json',
  );
}
