/**
 * Objects in the cache are shared by every reader; freezing them makes an accidental mutation a
 * TypeError at the line that did it, instead of silent cache corruption (client-node hands out its
 * cached objects by reference). Copy with `structuredClone` to edit.
 */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as object)) deepFreeze(v);
  }
  return value;
}

/** A mutable deep copy of a cached object. */
export const thaw = <T>(value: T): T => structuredClone(value) as T;
