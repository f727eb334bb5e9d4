import type { ClusterAccess } from '../client/kubeconfig.js';
import type { Logger } from 'pino';
import { randomBytes } from 'node:crypto';
import { Cache } from '../cache/cache.js';
import { Client } from '../client/client.js';
import { ApiServerLiveness } from '../client/liveness.js';
import { Transport } from '../client/transport.js';
import type { ControllerDefinition } from '../controller/builder.js';
import { Controller } from '../controller/controller.js';
import { EventRecorder } from '../events/recorder.js';
import { createLogger } from '../log/logger.js';
import { RuntimeMetrics } from '../metrics/metrics.js';
import { instanceName, operatorEnvironment, type OperatorEnvironment } from './environment.js';
import type { ManagerFlags } from './flags.js';
import { parseBindAddress, type RunningServer } from './http-server.js';
import { serveMetrics, serveProbes } from './endpoints.js';
import { SubjectAccessReview, TokenReview } from '../client/kind.js';
import { currentNamespace, loadKubeConfig } from './kubeconfig.js';
import { LeaderElector, type LeaderElectionConfig } from './leader-election.js';
import { mergeRules, rule, type PolicyRule } from '../rbac/rules.js';
import { Lease } from '../client/kind.js';
import { missingPermissions, permissionsFor, RbacError } from './rbac-check.js';
import { Tracer } from '../tracing/tracer.js';
import { OtlpExporter } from '../tracing/otlp-exporter.js';
import { resolveWebhookOptions, Webhooks, type WebhookOptions, type WebhookSettings } from '../webhook/webhooks.js';
import type { AdmissionWebhook } from '../webhook/admission.js';
import type { VersionedResource } from '../crd/versioned-resource.js';

/**
 * This replica's name in the Lease. In a pod, POD_NAME and POD_UID (the chart sets both): stable
 * across container restarts in the same pod, so a restarted operator takes its own lease back at
 * once instead of waiting out a lease it held itself; unique across pods. Elsewhere the host name
 * and a random suffix.
 */
export function leaderIdentity(env: OperatorEnvironment = operatorEnvironment()): string {
  if (env.podName && env.podUid) return `${env.podName}_${env.podUid}`;
  return `${instanceName(env)}_${randomBytes(4).toString('hex')}`;
}

/** Anything the manager starts and stops besides controllers. */
export interface Runnable {
  name: string;
  /** Runs only on the elected leader (default true, as controllers). */
  needLeaderElection?: boolean;
  start(signal: AbortSignal): void | Promise<void>;
  stop?(): void | Promise<void>;
}

export type { HealthCheck } from './endpoints.js';
import type { HealthCheck } from './endpoints.js';

export interface ManagerOptions {
  /** The operator's name: field manager for writes, event source, default lease name. */
  name: string;
  kubeConfig?: ClusterAccess;
  /** Namespaces to watch (default: WATCH_NAMESPACE; empty = all). */
  namespaces?: string[];
  /** Lease-based leader election; `true` uses the defaults (15 s / 10 s / 2 s). */
  leaderElection?: boolean | Partial<LeaderElectionConfig>;
  /** `:8080` by default; `0` disables. Serves /metrics and /debug/queue. */
  metricsBindAddress?: string;
  /**
   * HTTPS with authentication and authorization on /metrics and /debug/queue, as kubebuilder
   * scaffolds: a bearer token checked by TokenReview, then a SubjectAccessReview of GET on the path
   * (`nonResourceURLs`). The certificate is self-signed, made in memory at start.
   */
  metricsSecure?: boolean;
  /** `:8081` by default; `0` disables. */
  healthProbeBindAddress?: string;
  logger?: Logger;
  /** How long stop() waits for in-flight reconciles. Default 30 s. */
  gracefulShutdownTimeoutMs?: number;
  /** How long start() waits for caches. Default 2 min. */
  cacheSyncTimeoutMs?: number;
  /** Client-side QPS and burst (off by default). */
  qps?: number;
  burst?: number;
  /** API server liveness probing (see ApiServerLiveness); tests shorten it. */
  liveness?: { intervalMs?: number; timeoutMs?: number };
  /** Process metrics (memory, CPU, event loop) in /metrics. Default true. */
  processMetrics?: boolean;
  /**
   * OpenTelemetry tracing (off by default): a span per reconcile, with its triggers, and a child
   * span per API call it makes, sent over OTLP/HTTP (JSON) to `<endpoint>/v1/traces`. Default:
   * OTEL_EXPORTER_OTLP_ENDPOINT. Spans are batched every `intervalMs` (5 s).
   */
  tracing?: { endpoint?: string; intervalMs?: number };
  /** The environment (default: this process's); tests pass their own. */
  environment?: OperatorEnvironment;
  /** Informer reconnect backoff (tests shorten it). */
  watchBackoffMs?: { initial: number; max: number };
  /** Where and how admission and conversion webhooks are served (only when some are added). */
  webhook?: WebhookSettings;
}

type State = 'new' | 'starting' | 'running' | 'stopping' | 'stopped';

/**
 * Owns the client, the shared cache, the controllers and their lifecycle: caches are filled on every
 * replica (a standby is warm), controllers run only on the leader, /readyz tells the truth about the
 * caches and their watches, and shutdown drains in-flight work before releasing the lease.
 */
export class Manager {
  readonly log: Logger;
  readonly kubeConfig: ClusterAccess;
  readonly transport: Transport;
  readonly client: Client;
  readonly cache: Cache;
  readonly metrics: RuntimeMetrics;
  readonly recorder: EventRecorder;
  readonly identity: string;
  readonly environment: OperatorEnvironment;
  private readonly controllers: Controller[] = [];
  private readonly rbac: PolicyRule[][] = [];
  private readonly runnables: Runnable[] = [];
  private readonly healthChecks = new Map<string, HealthCheck>();
  private readonly readyChecks = new Map<string, HealthCheck>();
  private servers: RunningServer[] = [];
  private elector?: LeaderElector;
  private electing?: Promise<void>;
  private readonly liveness: ApiServerLiveness;
  readonly webhooks: Webhooks;
  readonly tracer = new Tracer();
  private exporter?: OtlpExporter;
  private readonly abort = new AbortController();
  private state: State = 'new';
  /** The current leadership term: aborted when it ends. */
  private term?: AbortController;
  private resolveDone!: () => void;
  /** Resolves when the manager has stopped. */
  readonly done = new Promise<void>((r) => (this.resolveDone = r));
  /** Ports the servers bound (after start). */
  readonly ports: { metrics?: number; probes?: number; webhook?: number } = {};

  constructor(readonly options: ManagerOptions) {
    this.log = options.logger ?? createLogger({ name: options.name });
    this.kubeConfig = options.kubeConfig ?? loadKubeConfig();
    this.metrics = new RuntimeMetrics(options.processMetrics ?? true);
    this.transport = new Transport(this.kubeConfig, {
      qps: options.qps,
      burst: options.burst,
      userAgent: `${options.name}/opkit`,
      tracer: this.tracer,
      onResponse: (method, code, seconds) => {
        this.metrics.restRequests.inc({ method, code: String(code) });
        this.metrics.restLatency.observe({ verb: method }, seconds);
      },
    });
    this.client = new Client(this.transport, { fieldManager: options.name });
    const env = options.environment ?? operatorEnvironment();
    this.environment = env;
    this.cache = new Cache(this.transport, this.log, { namespaces: options.namespaces ?? env.watchNamespaces, backoffMs: options.watchBackoffMs });
    this.identity = leaderIdentity(env);
    this.recorder = new EventRecorder(this.client, this.log.child({ component: 'events' }), { component: options.name, instance: instanceName(env) });
    this.liveness = new ApiServerLiveness(this.transport, this.log.child({ component: 'apiserver-liveness' }), {
      ...options.liveness,
      // Every connection may be half-open now: drop them so watches and requests start afresh.
      onUnresponsive: () => this.transport.resetConnections(),
      // Watches waiting out a backoff need not wait any longer.
      onRecovered: () => this.cache.retryNow(),
    });
    this.webhooks = new Webhooks({ client: this.client, transport: this.transport, log: this.log, metrics: this.metrics });
    this.healthChecks.set('ping', () => true);
    this.readyChecks.set('webhooks', () => this.webhooks.ready());
    this.readyChecks.set('apiserver', () => this.liveness.status());
    this.readyChecks.set('informers-synced', () => (this.cache.synced ? true : 'caches have not synced yet'));
    this.readyChecks.set('watches', () => {
      const failing = this.cache.failing();
      return failing.length ? `watch failing: ${failing.map((f) => `${f.informer} (${f.error?.message ?? 'disconnected'})`).join('; ')}` : true;
    });
  }

  /** A manager configured from the standard flags (MANAGER_FLAGS) and the environment. */
  static fromParsedFlags(name: string, flags: ManagerFlags, overrides: Partial<ManagerOptions> = {}): Manager {
    const logger = overrides.logger ?? createLogger({ name, level: flags.logLevel, format: flags.logFormat, timeEncoding: flags.logTimeEncoding, levelEncoding: flags.logLevelEncoding });
    const kubeConfig = overrides.kubeConfig ?? loadKubeConfig(flags.kubeconfig);
    return new Manager({
      name,
      kubeConfig,
      logger,
      metricsBindAddress: flags.metricsBindAddress,
      metricsSecure: flags.metricsSecure,
      healthProbeBindAddress: flags.healthProbeBindAddress,
      leaderElection: flags.leaderElect ? { namespace: flags.leaderElectionNamespace, name: flags.leaderElectionId } : false,
      tracing: flags.otelExporterOtlpEndpoint ? { endpoint: flags.otelExporterOtlpEndpoint } : undefined,
      webhook: { bindAddress: flags.webhookBindAddress, certDir: flags.webhookCertDir, secretName: flags.webhookSecretName, hosts: flags.webhookHost.length ? flags.webhookHost : undefined, configurationName: flags.webhookConfigurationName },
      ...overrides,
    });
  }

  get isLeader(): boolean {
    return !this.elector || this.elector.isLeader;
  }

  get running(): boolean {
    return this.state === 'running';
  }

  /** Adds a controller (from `controllerFor(...).reconcile(...)`) or any runnable. Before start(). */
  add(item: ControllerDefinition | Runnable): this {
    if (this.state !== 'new') throw new Error('add controllers before start()');
    if ('reconciler' in item) {
      for (const ix of item.indexes) this.cache.indexField(ix.kind, ix.name, ix.fn, ix.informer);
      this.rbac.push(item.rbac);
      this.controllers.push(
        new Controller(item.name, item.watches, item.reconciler, { cache: this.cache, client: this.client, log: this.log, metrics: this.metrics, recorder: this.recorder, tracer: this.tracer }, item.options),
      );
    } else this.runnables.push(item);
    return this;
  }

  private startTracing() {
    const endpoint = this.options.tracing?.endpoint ?? this.environment.otelEndpoint;
    if (!endpoint) return;
    this.exporter = new OtlpExporter({
      endpoint,
      intervalMs: this.options.tracing?.intervalMs,
      resource: { 'service.name': this.options.name, 'service.instance.id': this.identity, 'telemetry.sdk.name': '@opkit/runtime' },
      log: this.log.child({ component: 'tracing' }),
    });
    this.exporter.start();
    this.tracer.setSink(this.exporter);
    this.log.info({ endpoint }, 'tracing reconciles to an OTLP collector');
  }

  /** An admission webhook (`mutatingWebhook`, `validatingWebhook`), served over TLS by every replica. Before start(). */
  addWebhook(hook: AdmissionWebhook): this {
    if (this.state !== 'new') throw new Error('add webhooks before start()');
    this.webhooks.addAdmission(hook);
    return this;
  }

  /** Serves the conversions of a versioned API (`defineVersionedResource`) at /convert. Before start(). */
  addConversion(resource: VersionedResource): this {
    if (this.state !== 'new') throw new Error('add conversions before start()');
    this.webhooks.addConversion(resource);
    return this;
  }

  /** The webhook settings with their defaults filled in. */
  webhookOptions(): WebhookOptions {
    return resolveWebhookOptions(this.options.name, this.options.webhook ?? {}, currentNamespace(this.kubeConfig, this.environment));
  }

  addHealthzCheck(name: string, check: HealthCheck): void {
    this.healthChecks.set(name, check);
  }

  addReadyzCheck(name: string, check: HealthCheck): void {
    this.readyChecks.set(name, check);
  }

  private async startServers() {
    const metrics = await serveMetrics(this.options.metricsBindAddress ?? ':8080', {
      render: () => this.metrics.render(),
      contentType: this.metrics.registry.contentType,
      debugQueue: (key) => this.debugQueue(key),
      secure: this.options.metricsSecure ? { client: this.client, name: this.options.name, podName: this.environment.podName } : undefined,
    });
    const probes = await serveProbes(this.options.healthProbeBindAddress ?? ':8081', this.healthChecks, this.readyChecks);
    for (const [name, s] of [['metrics', metrics], ['probes', probes]] as const) {
      if (!s) continue;
      this.ports[name] = s.port;
      this.servers.push(s);
    }
  }

  /**
   * What /debug/queue shows: per controller, the keys queued, waiting out a delay or backoff, held
   * for the cache, in flight, and the last reconciles with their triggers; every informer's health.
   * With `key` (`namespace/name`), only that object, and why its last reconcile ran.
   */
  debugQueue(key?: string) {
    return {
      leader: this.isLeader,
      controllers: this.controllers.map((c) => c.inspect(key)),
      informers: this.cache.health(),
    };
  }

  /**
   * Starts servers and caches, waits for the caches to sync, then begins leader election (or starts
   * the controllers at once without it). Resolves when that is done; controllers of a standby
   * replica start when it becomes leader.
   */
  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error(`manager already ${this.state}`);
    this.state = 'starting';
    try {
      this.startTracing();
      await this.startServers();
      const webhookOptions = this.webhookOptions();
      await this.checkRbac(webhookOptions);
      // Before the caches: listing a versioned API may go through this operator's own conversion webhook.
      await this.webhooks.start(webhookOptions, this.abort.signal);
      this.ports.webhook = this.webhooks.port;
      for (const c of this.controllers) c.informers();
      this.cache.start();
      this.liveness.start();
      this.log.info({ namespaces: this.cache.namespaces.length ? this.cache.namespaces : 'all', controllers: this.controllers.map((c) => c.name) }, 'starting manager');
      await this.cache.waitForSync(this.options.cacheSyncTimeoutMs ?? 120_000);
      this.log.info('caches synced');
      for (const r of this.runnables.filter((r) => r.needLeaderElection === false)) await r.start(this.abort.signal);
    } catch (err) {
      this.state = 'running';
      await this.stop();
      throw err;
    }
    this.state = 'running';
    const le = this.options.leaderElection;
    if (!le) {
      await this.startLeaderWork();
      return;
    }
    const cfg = le === true ? {} : le;
    this.elector = new LeaderElector(
      this.client,
      { name: cfg.name ?? `${this.options.name}-leader`, namespace: cfg.namespace ?? currentNamespace(this.kubeConfig, this.environment), identity: cfg.identity ?? this.identity, ...cfg } as LeaderElectionConfig,
      this.log.child({ component: 'leader-election' }),
    );
    this.metrics.leaderStatus.set({ name: this.options.name }, 0);
    this.electing = this.elector.run(this.abort.signal, {
      onStartedLeading: () => {
        this.metrics.leaderStatus.set({ name: this.options.name }, 1);
        void this.startLeaderWork();
      },
      onStoppedLeading: (reason) => {
        this.metrics.leaderStatus.set({ name: this.options.name }, 0);
        // Another replica may lead already: stop acting now, drain nothing. Stopping is graceful
        // and handled by stop().
        if (reason === 'lost') this.haltLeaderWork();
      },
    });
  }

  /** Every permission the controllers declare (and the Lease, when electing), checked before any work. */
  private async checkRbac(webhooks: WebhookOptions) {
    const rules = mergeRules(...this.rbac);
    const perms = permissionsFor(rules, this.cache.namespaces);
    if (this.options.metricsSecure && parseBindAddress(this.options.metricsBindAddress ?? ':8080')) {
      perms.push(...permissionsFor([rule(TokenReview, ['create']), rule(SubjectAccessReview, ['create'])], []));
    }
    if (this.webhooks.any && webhooks.bindAddress) perms.push(...permissionsFor(this.webhooks.rbac(webhooks), [webhooks.secret.namespace]));
    const le = this.options.leaderElection;
    if (le) {
      const namespace = (le !== true && le.namespace) || currentNamespace(this.kubeConfig, this.environment);
      const name = (le !== true && le.name) || `${this.options.name}-leader`;
      perms.push(...permissionsFor([{ ...rule(Lease, ['get', 'update']), resourceNames: [name] }, rule(Lease, ['create'])], [namespace]));
    }
    if (!perms.length) return;
    const missing = await missingPermissions(this.client, perms);
    if (missing.length) throw new RbacError(missing);
    this.log.info({ permissions: perms.length }, 'RBAC: every declared permission is granted');
  }

  private async startLeaderWork() {
    if (this.term || this.state !== 'running') return;
    const term = new AbortController();
    this.term = term;
    for (const c of this.controllers) c.start();
    for (const r of this.runnables.filter((r) => r.needLeaderElection !== false)) await r.start(term.signal);
  }

  /** The lease is gone: controllers halt at once (their queues dropped), leader-only runnables stop. */
  private haltLeaderWork() {
    const term = this.term;
    if (!term) return;
    this.term = undefined;
    for (const c of this.controllers) c.halt();
    term.abort(new Error('leadership lost'));
    for (const r of this.runnables.filter((r) => r.needLeaderElection !== false)) {
      void Promise.resolve(r.stop?.()).catch((err) => this.log.warn({ err, runnable: r.name }, 'runnable failed to stop'));
    }
  }

  /** Graceful stop: controllers drain (up to the timeout), the lease is released, watches and servers close. */
  async stop(): Promise<void> {
    if (this.state === 'stopping' || this.state === 'stopped') return this.done;
    const wasStarting = this.state === 'starting' || this.state === 'new';
    this.state = 'stopping';
    this.log.info('stopping manager');
    const deadline = this.options.gracefulShutdownTimeoutMs ?? 30_000;
    await Promise.all(this.controllers.map((c) => c.stop(deadline)));
    const leaderWork = !!this.term;
    this.term?.abort(new Error('manager stopping'));
    this.term = undefined;
    for (const r of this.runnables.filter((r) => r.needLeaderElection === false || leaderWork)) {
      await Promise.resolve(r.stop?.()).catch((err) => this.log.warn({ err, runnable: r.name }, 'runnable failed to stop'));
    }
    this.abort.abort(new Error('manager stopping'));
    await this.electing;
    await this.recorder.flush();
    await this.elector?.release();
    await this.liveness.stop();
    await this.cache.stop();
    await this.webhooks.stop();
    await Promise.all(this.servers.map((s) => s.close()));
    this.servers = [];
    // The last spans (the drain's reconciles) go out before the process ends.
    await this.exporter?.stop();
    this.tracer.setSink(undefined);
    this.transport.close();
    this.state = 'stopped';
    if (!wasStarting) this.log.info('manager stopped');
    this.resolveDone();
  }

  /**
   * For an operator's main(): starts, stops gracefully on SIGTERM/SIGINT (second signal: exit at
   * once), and exits non-zero when startup fails.
   */
  async runUntilSignalled(): Promise<void> {
    let signals = 0;
    const onSignal = (sig: NodeJS.Signals) => {
      if (++signals > 1) process.exit(130);
      this.log.info({ signal: sig }, 'shutdown requested');
      void this.stop().then(() => process.exit(0));
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    // A stray rejection (a library's background promise) is a bug to log, not a reason to crash
    // every controller of the process.
    process.on('unhandledRejection', (reason) => this.log.error({ err: reason }, 'unhandled promise rejection'));
    try {
      await this.start();
    } catch (err) {
      this.log.fatal({ err }, 'manager failed to start');
      await this.stop().catch(() => undefined);
      process.exit(1);
    }
    await this.done;
  }
}
