import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Client, Kind, Manager } from '@opkit/runtime';

/**
 * What an in-process operator's queues and caches look like while a bench runs, printed in one
 * line per controller: keys queued, waiting out a delay (and how many of those are retries and how
 * far the latest is), held for the cache, in flight; each informer's lag behind the API server in
 * etcd revisions; and the event loop's delay. It is what /debug/queue serves, summed up, so a stall
 * can be told apart: work not queued, queued behind other work, parked in backoff, or held for a
 * cache that lags.
 */
type ControllerView = ReturnType<Manager['debugQueue']>['controllers'][number];
/** Keys the controller has anything to do with right now. */
const pending = (c: ControllerView) => c.queued.length + c.waiting.length + c.heldForCache.length + c.inFlight.length;

export function watchQueues(manager: Manager, admin: Client, probe: Kind) {
  const loop = monitorEventLoopDelay({ resolution: 20 });
  loop.enable();
  return {
    async print(): Promise<void> {
      const head = Number((await admin.list(probe, { limit: 1 })).metadata.resourceVersion);
      const q = manager.debugQueue();
      for (const c of q.controllers) {
        if (!c.running) continue;
        const retrying = c.waiting.filter((w) => w.retries);
        if (!pending(c)) continue;
        console.log(
          `    ${c.controller}: queued ${c.queued.length}, waiting ${c.waiting.length} (retries ${retrying.length}, latest in ${(Math.max(0, ...c.waiting.map((w) => w.inMs)) / 1000).toFixed(0)} s), held ${c.heldForCache.length}, in flight ${c.inFlight.length} (oldest ${(Math.max(0, ...c.inFlight.map((f) => f.forMs)) / 1000).toFixed(0)} s)`,
        );
      }
      const lags = q.informers
        .filter((i) => i.objects > 0)
        .map((i) => `${i.informer}${i.namespace ? `@${i.namespace}` : ''} ${head - Number(i.resourceVersion)}${i.connected ? '' : ' (disconnected)'}`);
      console.log(
        `    informer lag (revisions): ${lags.join(', ')}; event loop p99 ${(loop.percentile(99) / 1e6).toFixed(0)} ms, max ${(loop.max / 1e6).toFixed(0)} ms`,
      );
      loop.reset();
    },
    /** Why one key is not done: where it is in each controller's queue, and its last reconcile. */
    explain(key: string): unknown {
      return manager.debugQueue(key).controllers.filter((c) => pending(c) + c.last.length);
    },
    stop: () => loop.disable(),
  };
}
