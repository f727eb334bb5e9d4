import type { V1ObjectMeta, V1OwnerReference } from '@kubernetes/client-node';

/**
 * An API object as it travels on the wire. client-node's model classes declare timestamps as
 * `Date`, but watch events and generic reads deliver strings (client-node#655), so the same field
 * changes type depending on the path. We never deserialize: every path yields JSON, and `Wire<T>`
 * makes the types say so.
 */
export type Wire<T> = T extends Date ? string : T extends (infer U)[] ? Wire<U>[] : T extends object ? { [K in keyof T]: Wire<T[K]> } : T;

export type ObjectMeta = Wire<V1ObjectMeta>;
export type OwnerReference = Wire<V1OwnerReference>;

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
}

export interface ObjectList<T extends KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: T[];
}

/**
 * An object as the cache holds it. Stored objects always have a name, and the cache gives every one
 * a namespace (`''` for cluster-scoped kinds), so code reading the cache needs no `name!`.
 */
export type Cached<T extends KubeObject> = T & { metadata: T['metadata'] & { name: string; namespace: string } };

/** Identifies one object: namespace is omitted for cluster-scoped kinds. */
export interface ObjectKey {
  name: string;
  namespace?: string;
}

export const keyOf = (obj: { metadata: ObjectMeta } | ObjectKey): string => {
  const k = 'metadata' in obj ? obj.metadata : obj;
  return k.namespace ? `${k.namespace}/${k.name}` : `${k.name}`;
};

export const parseKey = (key: string): ObjectKey => {
  const i = key.indexOf('/');
  return i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
};
