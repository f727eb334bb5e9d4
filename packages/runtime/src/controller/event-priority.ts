import type { KubeObject } from '../client/types.js';
import { Priority } from '../queue/work-queue.js';

/**
 * The queue priority of one watch event: a number for every event of the watch, or a function of
 * the object now and before, for a watch whose events differ in urgency: `before` is undefined
 * for a create, and a delete passes the deleted object as both (nothing became anything). The
 * initial list is never asked: it runs at the controller's background priority.
 */
export type EventPriority<T extends KubeObject = KubeObject> = number | ((now: T, before: T | undefined) => number);

/**
 * `Priority.high` for the event in which an owned object becomes `done` (created done, or updated
 * from not done to done), normal for every other. The owner finishes the work it started as soon
 * as the result is in, ahead of new work queued before; the owned object's progress reports still
 * wait their turn, and merge there into one reconcile. Giving every event of the watch high
 * priority instead serves each report at once and merges none (docs/runtime.md, "Finish what was
 * started", has the measurement).
 */
export const finishing =
  <T extends KubeObject>(done: (o: T) => boolean): EventPriority<T> =>
  (now, before) =>
    done(now) && !(before && done(before)) ? Priority.high : Priority.normal;

/** The priority of an event with the object `now` and `before` it. */
export const priorityOf = <T extends KubeObject>(p: EventPriority<T> | undefined, now: T, before: T | undefined): number =>
  p === undefined ? Priority.normal : typeof p === 'number' ? p : p(now, before);
