import type { InformerOptions } from '../cache/cache.js';
import type { IndexFunc } from '../cache/store.js';
import { kindKey, type Kind } from '../client/kind.js';
import type { Cached, KubeObject, ObjectKey } from '../client/types.js';
import type { ControllerOptions, Reconciler, WatchSpec } from './controller.js';
import type { EventPriority } from './event-priority.js';
import { requestForObject, requestsForOwner, type MapFunc } from './handlers.js';
import { rule as rbacRule, type PolicyRule } from '../rbac/rules.js';
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
  /**
   * The queue priority of this watch's events (not of the initial list), or a function of the
   * object now and before: `finishing(done)` queues the owner high when an owned object reports
   * the result of work the owner started (a request signed, a job done), so the owner finishes it
   * ahead of new work queued before. Default `Priority.normal`.
   */
  priority?: EventPriority<Cached<T>>;
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

  constructor(
    private readonly primary: Kind<T>,
    primaryOptions: WatchOptions<T> = {},
  ) {
    this.controllerName = primary.kind.toLowerCase();
    this.watchList.push({
      kind: primary,
      map: requestForObject as MapFunc<KubeObject>,
      predicates: (primaryOptions.predicates ?? []) as Predicate[],
      informer: primaryOptions.informer,
    });
  }

  /** Objects this controller creates with a controller owner reference; their changes reconcile the owner. */
  owns<O extends KubeObject>(kind: Kind<O>, options: WatchOptions<O> = {}): this {
    this.watchList.push({
      kind,
      map: requestsForOwner(this.primary) as MapFunc<KubeObject>,
      predicates: (options.predicates ?? []) as Predicate[],
      informer: options.informer,
      priority: options.priority as EventPriority | undefined,
    });
    return this;
  }

  /** Any kind, mapped to requests by your function (e.g. pods by label, dependents through an index). */
  watches<O extends KubeObject>(kind: Kind<O>, map: MapFunc<O>, options: WatchOptions<O> = {}): this {
    this.watchList.push({
      kind,
      map: map as MapFunc<KubeObject>,
      predicates: (options.predicates ?? []) as Predicate[],
      informer: options.informer,
      priority: options.priority as EventPriority | undefined,
    });
    return this;
  }

  /**
   * Objects of `kind` that the primary names (a CA Secret, a source cluster), declared in one line:
   * the index of primaries by what they reference, the watch that maps a referenced object's change
   * back to every primary naming it, and the RBAC to read `kind`. `names` gives names (in the
   * primary's namespace) or keys (elsewhere: a cluster-scoped issuer's Secret). The referenced kind
   * is watched as metadata only by default: every change is seen, no data is held for objects
   * nobody references; read one in full with `ctx.readReferenced`.
   *
   *   controllerFor(Issuer.kind).references(Secret, (i) => (i.spec.ca ? [i.spec.ca.secretName] : []))
   */
  references<R extends KubeObject>(kind: Kind<R>, names: (obj: Cached<T>) => (string | ObjectKey)[], options: { informer?: InformerOptions } = {}): this {
    const index = referenceIndex(kind);
    const primary = this.primary;
    const keys = (obj: Cached<T>) =>
      names(obj).map((n) => {
        const key = typeof n === 'string' ? { namespace: kind.namespaced ? obj.metadata.namespace : undefined, name: n } : n;
        return `${key.namespace ?? ''}/${key.name}`;
      });
    this.withIndex(primary, index, keys);
    const map: MapFunc<R> = async (o, { cache }) =>
      (await cache.list(primary, { index: { name: index, value: `${o.metadata.namespace}/${o.metadata.name}` } })).map((p) => ({
        namespace: p.metadata.namespace || undefined,
        name: p.metadata.name,
      }));
    // A kind referencing its own kind (clusters naming source clusters) reuses the primary's informer.
    const same = kindKey(kind) === kindKey(primary);
    this.watches(kind, map, { informer: options.informer ?? (same ? undefined : { metadataOnly: true }) });
    this.rules.push(rbacRule(kind, ['get', 'list', 'watch']));
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

/** The name of the index `.references(kind, …)` keeps on the primary kind. */
export const referenceIndex = (kind: Kind): string => `references:${kindKey(kind)}`;

export const controllerFor = <T extends KubeObject>(kind: Kind<T>, options?: WatchOptions<T>): ControllerBuilder<T> => new ControllerBuilder(kind, options);
