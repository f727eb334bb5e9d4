import type { InformerOptions } from '../cache/cache.js';
import type { IndexFunc } from '../cache/store.js';
import type { Kind } from '../client/kind.js';
import type { Cached, KubeObject } from '../client/types.js';
import type { ControllerOptions, Reconciler, WatchSpec } from './controller.js';
import { requestForObject, requestsForOwner, type MapFunc } from './handlers.js';
import type { PolicyRule } from '../rbac/rules.js';
import type { Predicate } from './predicates.js';

/** A controller ready to be added to a manager. */
export interface ControllerDefinition {
  readonly name: string;
  readonly forKind: Kind;
  readonly watches: WatchSpec[];
  readonly options: ControllerOptions;
  readonly reconciler: Reconciler;
  /** Cache indexes the controller reads (registered by the manager before the caches start). */
  readonly indexes: IndexSpec[];
  /** The RBAC rules the controller needs: the chart's roles are generated from them, startup checks them. */
  readonly rbac: PolicyRule[];
}

export interface IndexSpec<T extends KubeObject = KubeObject> {
  kind: Kind<T>;
  name: string;
  fn: IndexFunc<T>;
  informer?: InformerOptions;
}

interface WatchOptions<T extends KubeObject> {
  predicates?: Predicate<Cached<T>>[];
  /** Which informer feeds this watch (selector, metadata-only). */
  informer?: InformerOptions;
}

/**
 * Declares a controller as controller-runtime's builder does:
 *
 *   controllerFor(Memcached).owns(Deployment).watches(Pod, mapPods).withEventFilter(generationChanged())
 *     .withOptions({ maxConcurrentReconciles: 2 }).reconcile(fn)
 */
export class ControllerBuilder<T extends KubeObject> {
  private readonly watchList: WatchSpec[] = [];
  private readonly global: Predicate[] = [];
  private opts: ControllerOptions = {};
  private readonly indexList: IndexSpec[] = [];
  private readonly rules: PolicyRule[] = [];
  private controllerName: string;

  constructor(private readonly primary: Kind<T>, primaryOptions: WatchOptions<T> = {}) {
    this.controllerName = primary.kind.toLowerCase();
    this.watchList.push({ kind: primary, map: requestForObject as MapFunc<KubeObject>, predicates: (primaryOptions.predicates ?? []) as Predicate[], informer: primaryOptions.informer });
  }

  /** Objects this controller creates with a controller owner reference; their changes reconcile the owner. */
  owns<O extends KubeObject>(kind: Kind<O>, options: WatchOptions<O> = {}): this {
    this.watchList.push({ kind, map: requestsForOwner(this.primary) as MapFunc<KubeObject>, predicates: (options.predicates ?? []) as Predicate[], informer: options.informer });
    return this;
  }

  /** Any kind, mapped to requests by your function (e.g. pods by label, dependents through an index). */
  watches<O extends KubeObject>(kind: Kind<O>, map: MapFunc<O>, options: WatchOptions<O> = {}): this {
    this.watchList.push({ kind, map: map as MapFunc<KubeObject>, predicates: (options.predicates ?? []) as Predicate[], informer: options.informer });
    return this;
  }

  /**
   * A cache index this controller relies on, e.g. dependents by the names they reference, so a
   * map function finds them without scanning (and without a process-global map that a restart loses).
   */
  withIndex<O extends KubeObject>(kind: Kind<O>, name: string, fn: IndexFunc<Cached<O>>, informer?: InformerOptions): this {
    this.indexList.push({ kind, name, fn, informer } as unknown as IndexSpec);
    return this;
  }

  /**
   * What the controller does with the API, as RBAC rules: the manager checks every one of them
   * (SelfSubjectAccessReview) before the first reconcile and names what is missing.
   */
  withRbac(rules: PolicyRule[]): this {
    this.rules.push(...rules);
    return this;
  }

  /** Predicates applied to every watch of this controller. */
  withEventFilter(...predicates: Predicate[]): this {
    this.global.push(...predicates);
    return this;
  }

  withOptions(options: ControllerOptions): this {
    this.opts = { ...this.opts, ...options };
    return this;
  }

  /** The controller's name in logs and metrics (default: the primary kind, lower-cased). */
  named(name: string): this {
    this.controllerName = name;
    return this;
  }

  reconcile(reconciler: Reconciler): ControllerDefinition {
    return {
      name: this.controllerName,
      forKind: this.primary,
      watches: this.watchList.map((w) => ({ ...w, predicates: [...this.global, ...w.predicates] })),
      options: this.opts,
      reconciler,
      indexes: this.indexList,
      rbac: this.rules,
    };
  }
}

export const controllerFor = <T extends KubeObject>(kind: Kind<T>, options?: WatchOptions<T>): ControllerBuilder<T> => new ControllerBuilder(kind, options);
