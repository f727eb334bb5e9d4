import type { Cache, InformerOptions } from '../cache/cache.js';
import type { Client } from '../client/client.js';
import type { Kind } from '../client/kind.js';
import type { KubeObject } from '../client/types.js';

/**
 * Deletes an object read from the cache, unless it is already on its way out, and waits until the
 * cache shows the delete: gone, or marked for deletion while finalizers or a grace period hold it.
 * Without the wait, the reconcile the delete itself triggers finds the object still cached and
 * deletes it again (a 404, or a second delete of a terminating object): a request for nothing.
 * Returns whether a delete was sent and found the object.
 */
export async function deleteObserved<T extends KubeObject>(
  client: Client,
  kind: Kind<T>,
  obj: T,
  opts: { cache?: Cache; informer?: InformerOptions; timeoutMs?: number } = {},
): Promise<boolean> {
  if (obj.metadata.deletionTimestamp) return false;
  const key = { namespace: obj.metadata.namespace, name: obj.metadata.name! };
  const deleted = await client.deleteIfExists(kind, key);
  await opts.cache?.observe(kind, key, undefined, { deleted: 'or-marked', timeoutMs: opts.timeoutMs ?? 5_000, informer: opts.informer });
  return deleted;
}
