// How many objects of a kind in a namespace satisfy a predicate, kept by one watch.
//
// The benches used to poll a full list (kubectl or a paginated LIST) every 0.5–1 s. At 10,000
// objects each poll is a 10–20 MB answer the API server encodes and the poller decodes, back to
// back: on two cores that took close to a core from the operators being measured and was counted
// as the API server's CPU. One watch costs the API server an event per change instead.
import { Informer, silentLogger, type Kind, type KubeObject, type Transport } from '@opkit/runtime';
import { loadavg } from 'node:os';

export interface WatchedCount {
  /** Objects that satisfy the predicate now. */
  readonly count: number;
  /**
   * Resolves once `want` objects satisfy the predicate, printing progress every `progressMs`; at
   * `deadlineMs` it resolves with what it had (`reached: false`) instead of failing, so a slow side
   * is still measured. Progress shows the time and rate since `since` (a performance.now(); default:
   * the call).
   */
  until(
    want: number,
    what: string,
    opts: { deadlineMs: number; progressMs?: number; alive?: () => void; since?: number },
  ): Promise<{ reached: boolean; count: number }>;
  stop(): Promise<void>;
}

export async function watchedCount<T extends KubeObject>(
  transport: Transport,
  kind: Kind<T>,
  namespace: string,
  matches: (o: T) => boolean,
): Promise<WatchedCount> {
  const informer = new Informer(transport, kind, silentLogger(), { namespace });
  const matching = new Set<string>();
  const note = (o: T) => {
    const name = o.metadata.name ?? '';
    if (matches(o)) matching.add(name);
    else matching.delete(name);
  };
  informer.addHandler({ onAdd: note, onUpdate: (_, o) => note(o), onDelete: (o) => matching.delete(o.metadata.name ?? '') });
  informer.start();
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => informer.synced && (clearInterval(tick), resolve()), 50);
  });
  return {
    get count() {
      return matching.size;
    },
    async until(want, what, { deadlineMs, progressMs = 30_000, alive, since }) {
      const t0 = performance.now();
      const from = since ?? t0;
      let lastPrint = t0;
      for (;;) {
        alive?.();
        const now = performance.now();
        if (matching.size >= want) return { reached: true, count: matching.size };
        if (now - t0 >= deadlineMs) return { reached: false, count: matching.size };
        if (now - lastPrint >= progressMs) {
          lastPrint = now;
          const s = (now - from) / 1000;
          console.log(
            `  … ${what}: ${matching.size} of ${want} after ${s.toFixed(0)} s (${(matching.size / s).toFixed(1)}/s, load ${loadavg()[0]!.toFixed(2)})`,
          );
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    stop: () => informer.stop(),
  };
}
