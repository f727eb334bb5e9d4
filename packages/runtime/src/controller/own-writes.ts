import { kindKey, type Kind } from '../client/kind.js';
import { keyOf, type KubeObject, type ObjectKey } from '../client/types.js';
import { compareResourceVersions, type RecordedWrite } from './read-your-writes.js';
import type { WriteObserver } from './reconcile-context.js';

/**
 * The versions this controller's own writes produced, so the watch events they cause can be told
 * from everyone else's (ControllerOptions.skipOwnWriteEvents): an event whose object is exactly a
 * version we wrote carries nothing the reconcile that wrote it did not already know. Any other
 * version (someone else's write, or ours followed by theirs) is a change and passes. The event of a
 * write can arrive before the write's own answer (the watch and the request are two connections):
 * events for an object with a write in flight wait until it has returned, then are judged. A version is
 * forgotten once a later version of its object is seen; versions whose event never comes (an
 * object outside every informer's selector) are bounded by MAX_VERSIONS.
 */
export class OwnWrites implements WriteObserver {
  static readonly MAX_VERSIONS = 10_000;
  private readonly versions = new Map<string, Set<string>>();
  private count = 0;
  /** Objects with writes in flight, and the events that came for them meanwhile. */
  private readonly inFlight = new Map<string, { writes: number; waiting: (() => void)[] }>();

  private static key(kind: Kind, obj: ObjectKey | { metadata: { namespace?: string; name?: string } }): string {
    return `${kindKey(kind)}|${keyOf(obj as ObjectKey)}`;
  }

  writeStarted(kind: Kind, key: ObjectKey): void {
    const k = OwnWrites.key(kind, key);
    const f = this.inFlight.get(k) ?? { writes: 0, waiting: [] };
    f.writes++;
    this.inFlight.set(k, f);
  }

  writeEnded(kind: Kind, key: ObjectKey): void {
    const k = OwnWrites.key(kind, key);
    const f = this.inFlight.get(k);
    if (!f || --f.writes > 0) return;
    this.inFlight.delete(k);
    for (const handle of f.waiting) handle();
  }

  /** When a write to `obj` is in flight, keeps `handle` until it has returned (true); else false. */
  deferred(kind: Kind, obj: KubeObject, handle: () => void): boolean {
    const f = this.inFlight.get(OwnWrites.key(kind, obj));
    if (!f) return false;
    f.waiting.push(handle);
    return true;
  }

  record(w: RecordedWrite): void {
    if (w.expectation.kind !== 'written') return;
    if (this.count >= OwnWrites.MAX_VERSIONS) {
      this.versions.clear();
      this.count = 0;
    }
    const k = OwnWrites.key(w.kind, w.key);
    let set = this.versions.get(k);
    if (!set) this.versions.set(k, (set = new Set()));
    if (!set.has(w.expectation.resourceVersion)) {
      set.add(w.expectation.resourceVersion);
      this.count++;
    }
  }

  /**
   * Whether `obj` is exactly a version we wrote. Every handler of the kind asks about the same event,
   * so the answer does not consume it; versions older than the event's are forgotten instead (the
   * object has moved past them).
   */
  isOwn(kind: Kind, obj: KubeObject): boolean {
    const k = OwnWrites.key(kind, obj);
    const set = this.versions.get(k);
    const rv = obj.metadata.resourceVersion;
    if (!set || !rv) return false;
    for (const v of set)
      if ((compareResourceVersions(v, rv) ?? 0) < 0) {
        set.delete(v);
        this.count--;
      }
    if (!set.size) this.versions.delete(k);
    return set.has(rv);
  }
}
