import type { Client } from '../client/client.js';
import { ApiError, isInvalid } from '../client/errors.js';
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
  return guarded(client.patch(kind, { namespace: obj.metadata.namespace, name: obj.metadata.name! }, patch, 'json'), obj);
}

/**
 * The API server answers a failed JSON Patch `test` with 422 Invalid and no word of which operation
 * failed. Here only the `test` can fail (the other operations are made from the list it tests), and
 * its failure means the list changed since it was read: a conflict, retried quietly with fresh state
 * as any other, not invalid input to put on the object.
 */
async function guarded<T extends KubeObject>(patch: Promise<T>, obj: T): Promise<T> {
  try {
    return await patch;
  } catch (err) {
    if (!isInvalid(err)) throw err;
    throw new ApiError(err.method, err.path, 409, {
      kind: 'Status',
      code: 409,
      reason: 'Conflict',
      message: `the finalizers of ${obj.kind ?? 'object'} ${obj.metadata.name} changed since they were read (another controller added or removed one); read it again and retry`,
    });
  }
}

/**
 * Removes a finalizer by index, guarded by a `test` that the entry at that index is still ours.
 * Removing the last finalizer of an object being deleted deletes it.
 */
export async function removeFinalizer<T extends KubeObject>(client: Client, kind: Kind<T>, obj: T, finalizer: string): Promise<T> {
  const i = obj.metadata.finalizers?.indexOf(finalizer) ?? -1;
  if (i < 0) return obj;
  const key = { namespace: obj.metadata.namespace, name: obj.metadata.name! };
  return guarded(
    client.patch(
      kind,
      key,
      [
        { op: 'test', path: `/metadata/finalizers/${i}`, value: finalizer },
        { op: 'remove', path: `/metadata/finalizers/${i}` },
      ],
      'json',
    ),
    obj,
  );
}
