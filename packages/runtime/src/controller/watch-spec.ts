import type { InformerOptions } from '../cache/cache.js';
import type { Kind } from '../client/kind.js';
import type { KubeObject } from '../client/types.js';
import type { EventPriority } from './event-priority.js';
import type { MapFunc } from './handlers.js';
import type { Predicate } from './predicates.js';

/** One event source of a controller: a kind, how its objects map to requests, and filters. */
export interface WatchSpec<T extends KubeObject = KubeObject> {
  kind: Kind<T>;
  map: MapFunc<T>;
  predicates: Predicate<T>[];
  informer?: InformerOptions;
  /** The queue priority of this watch's events (the initial list's is the controller's background priority). */
  priority?: EventPriority<T>;
}
