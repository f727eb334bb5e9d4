import type { Cache } from '../cache/cache.js';
import { apiVersionOf, type Kind } from '../client/kind.js';
import type { Cached, KubeObject } from '../client/types.js';
import type { Request } from './result.js';

/** What a map function may consult: the shared cache (its indexes find dependents). */
export interface MapContext {
  cache: Cache;
}

/** Maps an object that changed (as the cache holds it) to the requests it should cause. */
export type MapFunc<T extends KubeObject> = (obj: Cached<T>, ctx: MapContext) => Request[] | Promise<Request[]>;

/** The primary kind: an object's own change reconciles it. */
export const requestForObject = <T extends KubeObject>(obj: Cached<T>): Request[] => [
  { namespace: obj.metadata.namespace || undefined, name: obj.metadata.name },
];

/**
 * An owned object reconciles its controller owner of `ownerKind` (the ownerReference with
 * controller=true), as controller-runtime's EnqueueRequestForOwner with OnlyControllerOwner.
 */
export function requestsForOwner<T extends KubeObject>(ownerKind: Kind, controllerOnly = true): MapFunc<T> {
  const apiVersion = apiVersionOf(ownerKind);
  const group = ownerKind.group;
  return (obj) =>
    (obj.metadata.ownerReferences ?? [])
      .filter(
        (ref) =>
          ref.kind === ownerKind.kind &&
          (ref.apiVersion === apiVersion || ref.apiVersion.split('/').slice(0, -1).join('/') === group) &&
          (!controllerOnly || ref.controller),
      )
      .map((ref) => ({ namespace: ownerKind.namespaced ? obj.metadata.namespace : undefined, name: ref.name }));
}
