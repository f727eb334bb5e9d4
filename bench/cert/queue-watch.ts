import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Priority, type Client, type Kind, type Manager } from '@opkit/runtime';
import { metricSeries } from '@opkit/runtime/testing';

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

/** A queue this long is broken down (below): what it holds tells a backlog of due work from one of leftovers. */
const BACKLOG = 20;

/** Counts by label, largest first: `label n, label n`. */
const tally = <T>(items: T[], label: (t: T) => string) => {
  const n = new Map<string, number>();
  for (const i of items) n.set(label(i), (n.get(label(i)) ?? 0) + 1);
  return [...n]
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
};

/**
 * A long queue, broken down: keys by priority, by what queued them last (a watched kind's event, a
 * requeue, a retry), and how long the oldest has waited since its first trigger was due. A queue at its
 * workers' capacity serves its highest priority first; what waits below it shows here.
 */
function backlog(queued: ControllerView['queued']): string {
  const now = Date.now();
  const priority = (p: number = Priority.normal) => (p === Priority.normal ? 'normal' : p > Priority.normal ? `high (${p})` : `low (${p})`);
  const last = (q: ControllerView['queued'][number]) => {
    const t = q.triggers.at(-1);
    return !t ? 'no trigger kept' : t.source === 'watch' ? `${t.kind} ${t.event}` : t.source;
  };
  // Since its first trigger was due: a requeue's is dated when it was asked for, `after` earlier.
  const firsts = queued
    .map((q) => q.triggers[0])
    .filter((t) => t !== undefined)
    .map((t) => t.at + (t.source === 'requeue' ? (t.after ?? 0) : 0));
  const oldest = firsts.length ? `${((now - Math.min(...firsts)) / 1000).toFixed(0)} s` : '-';
  return `by priority: ${tally(queued, (q) => priority(q.priority))}; by last trigger: ${tally(queued, last)}; oldest waiting ${oldest}`;
}

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
        if (c.queued.length >= BACKLOG) console.log(`      ${backlog(c.queued)}`);
      }
      const lags = q.informers
        .filter((i) => i.objects > 0)
        .map((i) => `${i.informer}${i.namespace ? `@${i.namespace}` : ''} ${head - Number(i.resourceVersion)}${i.connected ? '' : ' (disconnected)'}`);
      console.log(
        `    informer lag (revisions): ${lags.join(', ')}; event loop p99 ${(loop.percentile(99) / 1e6).toFixed(0)} ms, max ${(loop.max / 1e6).toFixed(0)} ms`,
      );
      loop.reset();
    },
    /**
     * Each controller's reconciles so far and the seconds they took (the runtime's own metrics):
     * `since` an earlier answer, what happened in between, printed as `name count (mean ms)`.
     */
    async reconciles(since?: Map<string, { count: number; seconds: number }>) {
      const exposition = await manager.metrics.registry.metrics();
      const seconds = new Map(metricSeries(exposition, 'controller_runtime_reconcile_time_seconds_sum').map((s) => [s.labels.controller, s.value]));
      const now = new Map(
        metricSeries(exposition, 'controller_runtime_reconcile_time_seconds_count').map((s) => [
          s.labels.controller ?? '',
          { count: s.value, seconds: seconds.get(s.labels.controller) ?? 0 },
        ]),
      );
      const text = [...now]
        .map(([name, r]) => ({ name, count: r.count - (since?.get(name)?.count ?? 0), seconds: r.seconds - (since?.get(name)?.seconds ?? 0) }))
        .filter((r) => r.count > 0)
        .sort((a, b) => b.count - a.count)
        .map((r) => `${r.name} ${r.count} (${((r.seconds / r.count) * 1000).toFixed(0)} ms)`)
        .join(', ');
      return { now, text };
    },
    /** Why one key is not done: where it is in each controller's queue, and its last reconcile. */
    explain(key: string): unknown {
      return manager.debugQueue(key).controllers.filter((c) => pending(c) + c.last.length);
    },
    stop: () => loop.disable(),
  };
}
