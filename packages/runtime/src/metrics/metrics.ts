import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { QueueMetrics } from '../queue/work-queue.js';

// controller-runtime's buckets (pkg/internal/controller/metrics), so dashboards built for Go
// operators read ours unchanged.
const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8,
  9, 10, 15, 20, 25, 30, 40, 50, 60,
];
// workqueue: ExponentialBuckets(10e-9, 10, 12), as client-go's workqueue metrics provider.
const QUEUE_BUCKETS = Array.from({ length: 12 }, (_, i) => 1e-8 * 10 ** i);

/**
 * The runtime's metrics under controller-runtime's names, in a registry of the manager's own (two
 * managers in one process, as in tests, do not collide).
 */
export class RuntimeMetrics {
  readonly registry = new Registry();
  readonly reconcileTotal = new Counter({
    name: 'controller_runtime_reconcile_total',
    help: 'Total number of reconciliations per controller',
    labelNames: ['controller', 'result'],
    registers: [this.registry],
  });
  readonly reconcileErrors = new Counter({
    name: 'controller_runtime_reconcile_errors_total',
    help: 'Total number of reconciliation errors per controller',
    labelNames: ['controller'],
    registers: [this.registry],
  });
  readonly terminalErrors = new Counter({
    name: 'controller_runtime_terminal_reconcile_errors_total',
    help: 'Total number of terminal reconciliation errors per controller',
    labelNames: ['controller'],
    registers: [this.registry],
  });
  /**
   * controller-runtime counts recovered Go panics here. A reconciler in JavaScript cannot panic; its
   * nearest kin are the engine's own faults, a bug rather than a refusal: TypeError, ReferenceError,
   * RangeError, SyntaxError. They are retried as any error; this counter tells them apart.
   */
  readonly reconcilePanics = new Counter({
    name: 'controller_runtime_reconcile_panics_total',
    help: 'Total number of reconciliations that failed on a programming fault (TypeError, ReferenceError, RangeError, SyntaxError) per controller',
    labelNames: ['controller'],
    registers: [this.registry],
  });
  readonly reconcileTimeouts = new Counter({
    name: 'controller_runtime_reconcile_timeouts_total',
    help: 'Total number of reconciliations that ran past the reconcile timeout per controller',
    labelNames: ['controller'],
    registers: [this.registry],
  });
  readonly reconcileTime = new Histogram({
    name: 'controller_runtime_reconcile_time_seconds',
    help: 'Length of time per reconciliation per controller',
    labelNames: ['controller'],
    buckets: RECONCILE_BUCKETS,
    registers: [this.registry],
  });
  readonly reconcileTriggers = new Counter({
    name: 'opkit_reconcile_triggers_total',
    help: "What caused reconciles: a watched kind's event (watch:<Kind>), a requeue, a retry or an enqueue; several triggers merged into one reconcile each count",
    labelNames: ['controller', 'trigger'],
    registers: [this.registry],
  });
  readonly maxConcurrent = new Gauge({
    name: 'controller_runtime_max_concurrent_reconciles',
    help: 'Maximum number of concurrent reconciles per controller',
    labelNames: ['controller'],
    registers: [this.registry],
  });
  readonly activeWorkers = new Gauge({
    name: 'controller_runtime_active_workers',
    help: 'Number of currently used workers per controller',
    labelNames: ['controller'],
    registers: [this.registry],
  });

  private readonly depth = new Gauge({
    name: 'workqueue_depth',
    help: 'Current depth of workqueue',
    labelNames: ['name', 'controller'],
    registers: [this.registry],
  });
  private readonly adds = new Counter({
    name: 'workqueue_adds_total',
    help: 'Total number of adds handled by workqueue',
    labelNames: ['name', 'controller'],
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'workqueue_queue_duration_seconds',
    help: 'How long in seconds an item stays in workqueue before being requested',
    labelNames: ['name', 'controller'],
    buckets: QUEUE_BUCKETS,
    registers: [this.registry],
  });
  private readonly workDuration = new Histogram({
    name: 'workqueue_work_duration_seconds',
    help: 'How long in seconds processing an item from workqueue takes',
    labelNames: ['name', 'controller'],
    buckets: QUEUE_BUCKETS,
    registers: [this.registry],
  });
  private readonly retries = new Counter({
    name: 'workqueue_retries_total',
    help: 'Total number of retries handled by workqueue',
    labelNames: ['name', 'controller'],
    registers: [this.registry],
  });
  private readonly unfinished = new Gauge({
    name: 'workqueue_unfinished_work_seconds',
    help: 'How many seconds of work has been done that is in progress and has not been observed by work_duration',
    labelNames: ['name', 'controller'],
    registers: [this.registry],
  });
  private readonly longest = new Gauge({
    name: 'workqueue_longest_running_processor_seconds',
    help: 'How many seconds has the longest running processor for workqueue been running',
    labelNames: ['name', 'controller'],
    registers: [this.registry],
  });

  readonly restRequests = new Counter({
    name: 'rest_client_requests_total',
    help: 'Number of HTTP requests, partitioned by status code and method',
    labelNames: ['code', 'method'],
    registers: [this.registry],
  });
  readonly restLatency = new Histogram({
    name: 'rest_client_request_duration_seconds',
    help: 'Request latency in seconds, by verb',
    labelNames: ['verb'],
    buckets: [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60],
    registers: [this.registry],
  });
  readonly leaderStatus = new Gauge({
    name: 'leader_election_master_status',
    help: 'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master',
    labelNames: ['name'],
    registers: [this.registry],
  });

  readonly webhookRequests = new Counter({
    name: 'controller_runtime_webhook_requests_total',
    help: 'Total number of admission requests by HTTP status code.',
    labelNames: ['webhook', 'code'],
    registers: [this.registry],
  });
  readonly webhookLatency = new Histogram({
    name: 'controller_runtime_webhook_latency_seconds',
    help: 'Histogram of the latency of processing admission requests',
    labelNames: ['webhook'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  constructor(defaultMetrics = true) {
    if (defaultMetrics) collectDefaultMetrics({ register: this.registry });
  }

  /** Queue metrics for one controller's queue; `processingAges` (ms each item has been in flight) feeds the unfinished-work gauges on scrape. */
  forQueue(name: string, processingAges: () => number[]): QueueMetrics {
    const labels = { name, controller: name };
    const refresh = () => {
      const ages = processingAges();
      this.unfinished.set(
        labels,
        ages.reduce((s, a) => s + a / 1000, 0),
      );
      this.longest.set(labels, ages.length ? Math.max(...ages) / 1000 : 0);
    };
    this.collectors.push(refresh);
    this.depth.set(labels, 0);
    this.adds.inc(labels, 0);
    this.retries.inc(labels, 0);
    return {
      depth: (n) => this.depth.set(labels, n),
      add: () => this.adds.inc(labels),
      retry: () => this.retries.inc(labels),
      queued: (s) => this.latency.observe(labels, s),
      worked: (s) => this.workDuration.observe(labels, s),
    };
  }

  private readonly collectors: (() => void)[] = [];

  /** The Prometheus text exposition. */
  async render(): Promise<string> {
    for (const c of this.collectors) c();
    return this.registry.metrics();
  }
}
