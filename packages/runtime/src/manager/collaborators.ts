import type { Logger } from 'pino';
import { Cache } from '../cache/cache.js';
import { systemClock, type Clock } from '../clock/clock.js';
import { Client } from '../client/client.js';
import type { ClusterAccess } from '../client/kubeconfig.js';
import { ApiServerLiveness } from '../client/liveness.js';
import { Transport } from '../client/transport.js';
import { resourceOfPath, WarningLog } from '../client/warnings.js';
import { EventRecorder } from '../events/recorder.js';
import { createLogger } from '../log/logger.js';
import { RuntimeMetrics } from '../metrics/metrics.js';
import { Tracer } from '../tracing/tracer.js';
import { Webhooks } from '../webhook/webhooks.js';
import { instanceName, operatorEnvironment, type OperatorEnvironment } from './environment.js';
import { loadKubeConfig } from './kubeconfig.js';
import type { ManagerOptions } from './manager.js';
import { leaderIdentity } from './identity.js';

/** Everything a manager is made of, wired once: one transport, one clock, one cache for all controllers. */
export interface Collaborators {
  log: Logger;
  clock: Clock;
  kubeConfig: ClusterAccess;
  environment: OperatorEnvironment;
  identity: string;
  metrics: RuntimeMetrics;
  tracer: Tracer;
  transport: Transport;
  client: Client;
  cache: Cache;
  recorder: EventRecorder;
  liveness: ApiServerLiveness;
  webhooks: Webhooks;
}

export function makeCollaborators(options: ManagerOptions): Collaborators {
  const log = options.logger ?? createLogger({ name: options.name });
  const clock = options.clock ?? systemClock;
  const kubeConfig = options.kubeConfig ?? loadKubeConfig();
  const environment = options.environment ?? operatorEnvironment();
  const metrics = new RuntimeMetrics(options.processMetrics ?? true);
  const tracer = new Tracer();
  const identity = leaderIdentity(environment);
  const warningLog = new WarningLog(log.child({ component: 'api-warnings' }));
  const transport = new Transport(kubeConfig, {
    qps: options.qps,
    burst: options.burst,
    // The replica in every request: the audit log tells replicas apart (and which one wrote when).
    userAgent: `${options.name}/opkit (${identity})`,
    tracer,
    clock,
    onResponse: (method, code, seconds) => {
      metrics.restRequests.inc({ method, code: String(code) });
      metrics.restLatency.observe({ verb: method }, seconds);
    },
    onWarning: (warnings, spec) => warningLog.note(resourceOfPath(spec.path), warnings),
  });
  const client = new Client(transport, { fieldManager: options.name });
  const cache = new Cache(transport, log, {
    namespaces: options.namespaces ?? environment.watchNamespaces,
    backoffMs: options.watchBackoffMs,
    clock,
    failOnMissingInformer: options.failOnMissingInformer,
    streamingLists: options.streamingLists,
  });
  const liveness = new ApiServerLiveness(transport, log.child({ component: 'apiserver-liveness' }), {
    ...options.liveness,
    clock,
    // Every connection may be half-open now: drop them so watches and requests start afresh.
    onUnresponsive: () => transport.resetConnections(),
    // Watches waiting out a backoff need not wait any longer.
    onRecovered: () => cache.retryNow(),
  });
  return {
    log,
    clock,
    kubeConfig,
    environment,
    identity,
    metrics,
    tracer,
    transport,
    client,
    cache,
    recorder: new EventRecorder(client, log.child({ component: 'events' }), {
      component: options.name,
      instance: instanceName(environment),
      api: options.eventsApi,
    }),
    liveness,
    webhooks: new Webhooks({ client, transport, log, metrics, clock }),
  };
}
