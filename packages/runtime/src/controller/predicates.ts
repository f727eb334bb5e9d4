import type { KubeObject } from '../client/types.js';
import { deepEqual } from '../helpers/equality.js';

/**
 * Filters events before they become requests. A missing method lets that event type through.
 * Compose with `and`, `or`, `not`.
 */
export interface Predicate<T extends KubeObject = KubeObject> {
  create?(obj: T): boolean;
  update?(old: T, obj: T): boolean;
  delete?(obj: T): boolean;
}

/** Spec changes only (metadata.generation): status writes do not trigger a reconcile. */
export const generationChanged = <T extends KubeObject>(): Predicate<T> => ({
  update: (old, obj) => old.metadata.generation !== obj.metadata.generation,
});

export const resourceVersionChanged = <T extends KubeObject>(): Predicate<T> => ({
  update: (old, obj) => old.metadata.resourceVersion !== obj.metadata.resourceVersion,
});

export const labelsChanged = <T extends KubeObject>(): Predicate<T> => ({
  update: (old, obj) => !deepEqual(old.metadata.labels ?? {}, obj.metadata.labels ?? {}),
});

export const annotationsChanged = <T extends KubeObject>(): Predicate<T> => ({
  update: (old, obj) => !deepEqual(old.metadata.annotations ?? {}, obj.metadata.annotations ?? {}),
});

/** Objects carrying these labels (on every event type). */
export const hasLabels = <T extends KubeObject>(labels: Record<string, string>): Predicate<T> => {
  const match = (o: T) => Object.entries(labels).every(([k, v]) => o.metadata.labels?.[k] === v);
  return { create: match, update: (_old, o) => match(o), delete: match };
};

type Method = 'create' | 'update' | 'delete';
const evaluate = <T extends KubeObject>(p: Predicate<T>, m: Method, args: [T] | [T, T]): boolean => {
  const fn = p[m] as ((...a: T[]) => boolean) | undefined;
  return fn ? fn(...args) : true;
};
const combine = <T extends KubeObject>(ps: Predicate<T>[], mode: 'and' | 'or'): Predicate<T> => {
  const run = (m: Method, args: [T] | [T, T]) => (mode === 'and' ? ps.every((p) => evaluate(p, m, args)) : ps.some((p) => evaluate(p, m, args)));
  return { create: (o) => run('create', [o]), update: (a, b) => run('update', [a, b]), delete: (o) => run('delete', [o]) };
};

export const and = <T extends KubeObject>(...ps: Predicate<T>[]): Predicate<T> => combine(ps, 'and');
export const or = <T extends KubeObject>(...ps: Predicate<T>[]): Predicate<T> => combine(ps, 'or');
export const not = <T extends KubeObject>(p: Predicate<T>): Predicate<T> => ({
  create: (o) => !evaluate(p, 'create', [o]),
  update: (a, b) => !evaluate(p, 'update', [a, b]),
  delete: (o) => !evaluate(p, 'delete', [o]),
});

export { evaluate as evaluatePredicate };
