import type { ClusterAccess } from '../client/kubeconfig.js';
import type { Logger } from 'pino';
import type { Cache } from '../cache/cache.js';
import type { Clock } from '../clock/clock.js';
import type { Client } from '../client/client.js';
import type { ApiServerLiveness } from '../client/liveness.js';
import type { Transport } from '../client/transport.js';
import type { ControllerDefinition } from '../controller/builder.js';
import { Controller } from '../controller/controller.js';
import type { EventRecorder } from '../events/recorder.js';
import { createLogger } from '../log/logger.js';
import type { RuntimeMetrics } from '../metrics/metrics.js';
import type { OperatorEnvironment } from './environment.js';
import { FlagError, type ManagerFlags } from './flags.js';
import { parseBindAddress, type Route, type RunningServer } from './http-server.js';
import { RESTMapper } from '../client/discovery.js';
import { serveMetrics, serveProbes } from './endpoints.js';
import { SubjectAccessReview, TokenReview } from '../client/kind.js';
import { currentNamespace, loadKubeConfig } from './kubeconfig.js';
import { LeaderElector, type LeaderElectionConfig } from './leader-election.js';
import type { ElectionTiming } from './leader-election-state.js';
import { ShardMember } from '../sharding/member.js';
import { controllersListener } from '../sharding/listener.js';
import { shardSelector, WHOLE, type ShardField } from '../sharding/ranges.js';
import { mergeRules, rule, type PolicyRule } from '../rbac/rules.js';
import { Lease, resourceName, resourcePath, type Kind } from '../client/kind.js';
import { ApiError } from '../client/errors.js';
import { hashLiteral } from '../sharding/hash.js';
import { missingPermissions, permissionsFor, RbacError } from './rbac-check.js';
import { retryTransient } from '../client/retry.js';
import type { Tracer } from '../tracing/tracer.js';
import { OtlpExporter } from '../tracing/otlp-exporter.js';
import { resolveWebhookOptions, type Webhooks, type WebhookOptions, type WebhookSettings } from '../webhook/webhooks.js';
import type { AdmissionWebhook } from '../webhook/admission.js';
import type { VersionedResource } from '../crd/versioned-resource.js';
import { StorageVersionMigration } from '../crd/storage-migration.js';
import { makeCollaborators } from './collaborators.js';
import { initialLifecycle, lifecycleStep, type LifecycleEffect, type LifecycleEvent, type LifecycleState } from './lifecycle.js';
import { RunnableGroup, type Runnable } from './runnables.js';
import { DEFAULT_COMPACTION_POLICY, IdleCompaction, workSince, type CompactionPolicy } from './idle-compaction.js';

/** The metrics server's own paths (endpoints.ts, profiling.ts). */
const RESERVED_METRICS_PATHS = ['/metrics', '/debug/queue', '/debug/heap-snapshot', '/debug/cpu-profile'];
export { leaderIdentity } from './identity.js';
export type { Runnable } from './runnables.js';
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
  /**
   * Run on every replica, each reconciling its part of the objects (docs/runtime.md, "Sharding"):
   * the replicas of one `ring` (default: the operator's name) split the hash space of their primary
   * objects' `field` (default uid) between them through Leases in `namespace` (default: the
   * operator's), and hand parts over only once drained. Instead of leader election, not with it.
   * `selectOnServer`: each controller's primary informer lists and watches only its replica's part
   * (a shard selector, where the API server applies them: Kubernetes 1.36's `ShardedListAndWatch`),
   * so each replica caches only its share of the primary objects; off by default because every
   * reader of those informers then sees only the share (a reconciler that reads other primary
   * objects, as the CDN operator reads a cluster's sources, must leave it off).
   */
  sharding?: { ring?: string; namespace?: string; field?: ShardField; timing?: Partial<ElectionTiming>; selectOnServer?: boolean };
  /** `:8080` by default; `0` disables. Serves /metrics and /debug/queue. */
  metricsBindAddress?: string;
  /**
   * HTTPS with authentication and authorization on /metrics and /debug/queue, as kubebuilder
   * scaffolds: a bearer token checked by TokenReview, then a SubjectAccessReview of GET on the path
   * (`nonResourceURLs`). The certificate is self-signed, made in memory at start.
   */
  metricsSecure?: boolean;
  /** Without `metricsSecure`, serve /debug/queue anyway, unauthenticated (off by default: it names objects and quotes errors). */
  insecureDebugQueue?: boolean;
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
   * Memory given back after a burst of work (idle-compaction.ts): one compacting collection once
   * the heap has grown and every controller has been idle for `idleMs` (10 s). On by default;
   * `false` leaves the heap as V8 keeps it.
   */
  idleCompaction?: false | Partial<CompactionPolicy>;
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
  /** The Events API the recorder writes (EventRecorderOptions.api); default core/v1. */
  eventsApi?: 'core/v1' | 'events.k8s.io/v1';
  /**
   * A read of anything not declared before the start fails instead of starting an informer
   * (CacheOptions.failOnMissingInformer). Off for a Manager built by hand (as controller-runtime's);
   * on for operators run by runOperator and for testManager.
   */
  failOnMissingInformer?: boolean;
  /** Full lists streamed where the API server offers it (CacheOptions.streamingLists); default on. */
  streamingLists?: boolean;
  /** Where and how admission and conversion webhooks are served (only when some are added). */
  webhook?: WebhookSettings;
  /** The one clock every part of the manager reads (tests pass a FakeClock). */
  clock?: Clock;
}

/**
 * Owns the client, the shared cache, the controllers and their lifecycle: caches are filled on every
 * replica (a standby is warm), controllers run only on the leader, and shutdown drains in-flight
 * work before releasing the lease. Its phases and what moves between them are one pure table
 * (lifecycle.ts); this class performs the effects the table names.
 */
export class Manager {
  readonly log: Logger;
  readonly clock: Clock;
  readonly kubeConfig: ClusterAccess;
  readonly transport: Transport;
  readonly client: Client;
  readonly cache: Cache;
  /** Where a kind lives, asked of the API server (client/discovery.ts): `await manager.restMapper.kindFor('apps/v1', 'Deployment')`. */
  readonly restMapper: RESTMapper;
  readonly metrics: RuntimeMetrics;
  readonly recorder: EventRecorder;
  readonly identity: string;
  readonly environment: OperatorEnvironment;
  readonly webhooks: Webhooks;
  readonly tracer: Tracer;
  private readonly liveness: ApiServerLiveness;
  private readonly controllers: Controller[] = [];
  private readonly rbac: PolicyRule[][] = [];
  /** Runnables of every replica, for the manager's life; and those of each leadership term. */
  private readonly always: RunnableGroup;
  private readonly perTerm: RunnableGroup;
  private readonly healthChecks = new Map<string, HealthCheck>();
  private readonly readyChecks = new Map<string, HealthCheck>();
  private readonly cacheChecks = new Map<string, HealthCheck>();
  private readonly metricsRoutes: Record<string, Route> = {};
  private servers: RunningServer[] = [];
  private elector?: LeaderElector;
  private electing?: Promise<void>;
  /** This replica's place in its shard ring (ManagerOptions.sharding). */
  shardMember?: ShardMember;
  private sharding?: Promise<void>;
  private exporter?: OtlpExporter;
  /** Ends what runs for the manager's whole life: election, the webhook certificates' keeper, a start-up still waiting. */
  private readonly abort = new AbortController();
  private lifecycle: LifecycleState = initialLifecycle();
  /** The current leadership term: aborted when it ends. */
  private term?: AbortController;
  private startingUp?: Promise<void>;
  private startError?: unknown;
  private readonly started = deferred();
  private readonly stopped = deferred();
  /** Resolves when the manager has stopped. */
  readonly done: Promise<void> = this.stopped.promise;
  /** Ports the servers bound (after start). */
  readonly ports: { metrics?: number; probes?: number; webhook?: number } = {};

  constructor(readonly options: ManagerOptions) {
    if (options.sharding && options.leaderElection) throw new Error('sharding and leader election are alternatives: a sharded operator runs on every replica');
    const c = makeCollaborators(options);
    ({
      log: this.log,
      clock: this.clock,
      kubeConfig: this.kubeConfig,
      environment: this.environment,
      identity: this.identity,
      metrics: this.metrics,
      tracer: this.tracer,
    } = c);
    ({ transport: this.transport, client: this.client, cache: this.cache, recorder: this.recorder, liveness: this.liveness, webhooks: this.webhooks } = c);
    this.restMapper = new RESTMapper(this.transport, { clock: c.clock });
    this.always = new RunnableGroup(this.log);
    this.perTerm = new RunnableGroup(this.log);
    if (options.idleCompaction !== false) {
      const policy = { ...DEFAULT_COMPACTION_POLICY, ...options.idleCompaction };
      const busy = workSince(
        () => this.controllers.some((ctl) => ctl.pending > 0),
        () => this.webhooks.calls,
      );
      this.always.add(new IdleCompaction(busy, this.clock, this.log.child({ component: 'idle-compaction' }), policy));
    }
    this.healthChecks.set('ping', () => true);
    // Readiness routes the webhook Service: it must not wait for the caches, since a replica may
    // list its own kind through its own conversion webhook (docs/runtime.md, "Readiness").
    this.readyChecks.set('webhooks', () => this.webhooks.ready());
    this.cacheChecks.set('apiserver', () => this.liveness.status());
    this.cacheChecks.set('informers-synced', () => (this.cache.synced ? true : 'caches have not synced yet'));
    this.cacheChecks.set('watches', () => {
      const failing = this.cache.failing();
      return failing.length ? `watch failing: ${failing.map((f) => `${f.informer} (${f.error?.message ?? 'disconnected'})`).join('; ')}` : true;
    });
    this.cacheChecks.set('webhook-certificates', () => this.webhooks.problem() ?? true);
  }

  /** A manager configured from the standard flags (MANAGER_FLAGS) and the environment. */
  static fromParsedFlags(
    name: string,
    flags: ManagerFlags,
    overrides: Partial<ManagerOptions> = {},
    /** What the operator's code allows (OperatorDefinition.sharding). */
    traits: { selectShardsOnServer?: boolean } = {},
  ): Manager {
    if (flags.shard && flags.leaderElect) throw new FlagError('--shard and --leader-elect are alternatives: a sharded operator runs on every replica');
    const logger =
      overrides.logger ??
      createLogger({ name, level: flags.logLevel, format: flags.logFormat, timeEncoding: flags.logTimeEncoding, levelEncoding: flags.logLevelEncoding });
    const kubeConfig = overrides.kubeConfig ?? loadKubeConfig(flags.kubeconfig);
    return new Manager({
      name,
      kubeConfig,
      logger,
      metricsBindAddress: flags.metricsBindAddress,
      metricsSecure: flags.metricsSecure,
      insecureDebugQueue: flags.insecureDebugQueue,
      healthProbeBindAddress: flags.healthProbeBindAddress,
      leaderElection: flags.leaderElect ? { namespace: flags.leaderElectionNamespace, name: flags.leaderElectionId } : false,
      sharding: flags.shard ? { ring: flags.shardRing, namespace: flags.shardNamespace, selectOnServer: traits.selectShardsOnServer } : undefined,
      tracing: flags.otelExporterOtlpEndpoint ? { endpoint: flags.otelExporterOtlpEndpoint } : undefined,
      webhook: {
        bindAddress: flags.webhookBindAddress,
        certDir: flags.webhookCertDir,
        secretName: flags.webhookSecretName,
        hosts: flags.webhookHost.length ? flags.webhookHost : undefined,
        configurationName: flags.webhookConfigurationName,
      },
      // An operator (runOperator) reads only what it declared: an undeclared read fails its
      // reconcile with MissingInformerError instead of holding every such object of the cluster.
      failOnMissingInformer: true,
      idleCompaction: flags.idleHeapCompaction > 0 && { idleMs: flags.idleHeapCompaction },
      ...overrides,
    });
  }

  /** The controller added under this name. */
  controllerNamed(name: string): Controller | undefined {
    return this.controllers.find((c) => c.name === name);
  }

  get isLeader(): boolean {
    return !this.elector || this.elector.isLeader;
  }

  /** Started and not stopping: a standby or the leader. */
  get running(): boolean {
    return this.lifecycle.phase === 'standby' || this.lifecycle.phase === 'leading';
  }

  private assertNew(what: string) {
    if (this.lifecycle.phase !== 'new') throw new Error(`add ${what} before start()`);
  }

  /** Adds a controller (from `controllerFor(...).reconcile(...)`) or any runnable. Before start(). */
  add(item: ControllerDefinition | Runnable): this {
    this.assertNew('controllers');
    if ('reconciler' in item) {
      // Names label every metric and /debug/queue: two controllers under one name would merge there.
      if (this.controllers.some((c) => c.name === item.name))
        throw new Error(`a controller named "${item.name}" is already added: give each controller its own name (controllerFor(…).named(…))`);
      for (const ix of item.indexes) this.cache.indexField(ix.kind, ix.name, ix.fn, ix.informer);
      this.rbac.push(item.rbac);
      this.controllers.push(
        new Controller(
          item.name,
          item.watches,
          item.reconciler,
          { cache: this.cache, client: this.client, log: this.log, metrics: this.metrics, recorder: this.recorder, tracer: this.tracer, clock: this.clock },
          item.options,
        ),
      );
    } else (item.needLeaderElection === false ? this.always : this.perTerm).add(item);
    return this;
  }

  /** An admission webhook (`mutatingWebhook`, `validatingWebhook`), served over TLS by every replica. Before start(). */
  addWebhook(hook: AdmissionWebhook): this {
    this.assertNew('webhooks');
    this.webhooks.addAdmission(hook);
    return this;
  }

  /**
   * Serves the conversions of a versioned API (`defineVersionedResource`) at /convert, and, on the
   * leader, migrates what is stored in older versions to the hub (StorageVersionMigration). Before start().
   */
  addConversion(resource: VersionedResource): this {
    this.assertNew('conversions');
    this.webhooks.addConversion(resource);
    this.perTerm.add(new StorageVersionMigration(resource, this.client, this.log.child({ component: 'storage-version-migration' }), this.clock));
    return this;
  }

  /** The webhook settings with their defaults filled in. */
  webhookOptions(): WebhookOptions {
    return resolveWebhookOptions(this.options.name, this.options.webhook ?? {}, currentNamespace(this.kubeConfig, this.environment));
  }

  addHealthzCheck(name: string, check: HealthCheck): void {
    this.healthChecks.set(name, check);
  }

  /** A check of whether this replica can answer the calls routed to it; a failing one takes it out of its Services. */
  addReadyzCheck(name: string, check: HealthCheck): void {
    this.readyChecks.set(name, check);
  }

  /** A check of something the operator keeps in sync with the cluster, shown on /cachez (no probe reads it). */
  addCachezCheck(name: string, check: HealthCheck): void {
    this.cacheChecks.set(name, check);
  }

  /**
   * A GET route of the operator's own on the metrics server (controller-runtime's ExtraHandlers),
   * behind the same authentication and authorization as /metrics when `--metrics-secure` (each path
   * its own `nonResourceURLs` grant). Added before start; the server's own paths cannot be taken.
   */
  addMetricsRoute(path: string, route: Route): void {
    if (this.servers.length) throw new Error(`addMetricsRoute(${path}): the metrics server has started; add routes before start()`);
    if (!path.startsWith('/') || RESERVED_METRICS_PATHS.includes(path) || this.metricsRoutes[path])
      throw new Error(`addMetricsRoute(${path}): ${path.startsWith('/') ? 'the path is taken' : 'a path starts with /'}`);
    this.metricsRoutes[path] = route;
  }

  /**
   * What /debug/queue shows: per controller, the keys queued, waiting out a delay or backoff, held
   * for the cache, in flight, and the last reconciles with their triggers; every informer's health.
   * With `key` (`namespace/name`), only that object, and why its last reconcile ran.
   */
  debugQueue(key?: string) {
    return {
      leader: this.isLeader,
      phase: this.lifecycle.phase,
      controllers: this.controllers.map((c) => c.inspect(key)),
      informers: this.cache.health(),
    };
  }

  /**
   * Starts servers and caches, waits for the caches to sync, then begins leader election (or starts
   * the controllers at once without it). Resolves when that is done; controllers of a standby
   * replica start when it becomes leader. Rejects, once everything is closed again, when start-up fails.
   */
  async start(): Promise<void> {
    if (this.lifecycle.phase !== 'new') throw new Error(`manager already ${this.lifecycle.phase}`);
    await this.dispatch({ type: 'start' });
    await this.started.promise;
  }

  /** Graceful stop: controllers drain (up to the timeout), the lease is released, watches and servers close. */
  async stop(): Promise<void> {
    await this.dispatch({ type: 'stop' });
    if (this.lifecycle.phase === 'stopped') this.stopped.resolve();
    return this.done;
  }

  /** Moves the lifecycle and performs what the transition asks, in order. */
  private async dispatch(e: LifecycleEvent): Promise<void> {
    const t = lifecycleStep(this.lifecycle, e);
    this.lifecycle = t.state;
    for (const effect of t.effects) await this.perform(effect);
  }

  private async perform(effect: LifecycleEffect): Promise<void> {
    switch (effect) {
      case 'startUp':
        // Not awaited by dispatch: a stop() may arrive while the caches sync, and must be heard.
        this.startingUp = this.startUp().then(
          () => this.dispatch({ type: 'synced' }),
          (err: unknown) => {
            this.startError = err;
            return this.dispatch({ type: 'startFailed' });
          },
        );
        return;
      case 'campaign':
        await this.always.start(this.abort.signal);
        await this.campaign();
        this.started.resolve();
        return;
      case 'beginTerm':
        return this.beginTerm();
      case 'abortTerm':
        return this.abortTerm();
      case 'drainTerm':
        void this.drainTerm().then(() => this.dispatch({ type: 'drained' }));
        return;
      case 'tearDown':
        void this.tearDown()
          .then(() => this.dispatch({ type: 'closed' }))
          .then(() => this.finish());
        return;
    }
  }

  /** Servers, the RBAC check, webhooks, caches; resolves once the caches synced. */
  private async startUp(): Promise<void> {
    this.startTracing();
    await this.startServers();
    const webhookOptions = this.webhookOptions();
    await this.checkRbac(webhookOptions);
    // Before the caches: listing a versioned API may go through this operator's own conversion webhook.
    await this.webhooks.start(webhookOptions, this.abort.signal);
    this.ports.webhook = this.webhooks.port;
    for (const c of this.controllers) c.informers();
    // Before the caches start: a primary informer selected on the server lists only its share.
    await this.shardControllers();
    this.cache.start();
    this.liveness.start();
    this.log.info(
      { namespaces: this.cache.namespaces.length ? this.cache.namespaces : 'all', controllers: this.controllers.map((c) => c.name) },
      'starting manager',
    );
    await this.cache.waitForSync(this.options.cacheSyncTimeoutMs ?? 120_000, undefined, this.abort.signal);
    this.log.info('caches synced');
  }

  /** Where the shard ring's Leases live: as asked, else the operator's own namespace. */
  private shardingNamespace(sharding: NonNullable<ManagerOptions['sharding']>): string {
    return sharding.namespace ?? currentNamespace(this.kubeConfig, this.environment);
  }

  /**
   * This replica's pod, when the environment names it and it runs in `namespace` (an owner must be
   * in its dependent's namespace: the garbage collector deletes a dependent whose owner it cannot
   * find there).
   */
  private ownPodIn(namespace: string): { name: string; uid: string } | undefined {
    const { podName, podUid, podNamespace } = this.environment;
    return podName && podUid && podNamespace === namespace ? { name: podName, uid: podUid } : undefined;
  }

  /** Sharded: every controller runs only its replica's keys, and its primary informer lists only them when asked and possible. */
  private async shardControllers(): Promise<void> {
    const sharding = this.options.sharding;
    if (!sharding) return;
    const field = sharding.field ?? 'object.metadata.uid';
    const onServer = !!sharding.selectOnServer && this.controllers.length > 0 && (await this.serverSelectsShards(this.controllers[0]!.primaryKind, field));
    for (const c of this.controllers) c.shardBy(field, { onServer });
  }

  /**
   * Whether the API server applies shard selectors. A LIST with one says so in its metadata
   * (`shardInfo`), except for custom resources (their unstructured lists carry no shardInfo in
   * 1.36): then a LIST with an empty range tells, which a server that applies shard selectors
   * refuses ("invalid shard selector") and one without the feature (gate off, or before 1.36)
   * ignores, answering with everything.
   */
  private async serverSelectsShards(kind: Kind, field: ShardField): Promise<boolean> {
    const probe = (selector: string) =>
      this.transport.request<{ metadata: { shardInfo?: { selector?: string } } }>({
        method: 'GET',
        path: resourcePath(kind, kind.namespaced ? this.cache.namespaces[0] : undefined),
        query: { limit: 1, shardSelector: selector },
        signal: this.abort.signal,
      });
    try {
      if ((await probe(shardSelector(field, WHOLE))).metadata.shardInfo) return true;
      try {
        await probe(`shardRange(${field}, '${hashLiteral(0n)}', '${hashLiteral(0n)}')`);
      } catch (err) {
        if (err instanceof ApiError && /shard selector/i.test(err.message)) return true;
        throw err;
      }
      this.log.warn(
        { resource: resourceName(kind) },
        'the API server does not apply shard selectors (Kubernetes 1.36+ with the ShardedListAndWatch feature gate): every replica caches every primary object; each still reconciles only its part',
      );
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'could not learn whether the API server applies shard selectors; caching every primary object');
    }
    return false;
  }

  /** Stands for election; without it, is elected at once. Sharded, every replica runs, each on its part. */
  private async campaign(): Promise<void> {
    const sharding = this.options.sharding;
    if (sharding) {
      this.shardMember = new ShardMember(
        this.client,
        {
          ring: sharding.ring ?? this.options.name,
          namespace: this.shardingNamespace(sharding),
          identity: this.identity,
          timing: sharding.timing,
          // The Lease this operator's replicas hold when leader-elected (LeaderElectionConfig's default name).
          waitForLeaderLease: `${this.options.name}-leader`,
          pod: this.ownPodIn(this.shardingNamespace(sharding)),
        },
        this.log.child({ component: 'sharding' }),
        this.clock,
      );
      const member = this.shardMember;
      // Removed from the ring (its Lease deleted while it held it): a restart is how it rejoins.
      this.healthChecks.set('shard-ring', () => member.removed ?? true);
      this.sharding = member.run(this.abort.signal, controllersListener(this.controllers));
      return this.dispatch({ type: 'elected' });
    }
    const le = this.options.leaderElection;
    if (!le) return this.dispatch({ type: 'elected' });
    const cfg = le === true ? {} : le;
    this.elector = new LeaderElector(
      this.client,
      {
        name: cfg.name ?? `${this.options.name}-leader`,
        namespace: cfg.namespace ?? currentNamespace(this.kubeConfig, this.environment),
        identity: cfg.identity ?? this.identity,
        ...cfg,
      } as LeaderElectionConfig,
      this.log.child({ component: 'leader-election' }),
      this.clock,
    );
    this.metrics.leaderStatus.set({ name: this.options.name }, 0);
    this.electing = this.elector.run(this.abort.signal, {
      onStartedLeading: () => void this.dispatch({ type: 'elected' }),
      onStoppedLeading: (reason) => {
        this.metrics.leaderStatus.set({ name: this.options.name }, 0);
        // Another replica may lead already: stop acting now. A stop is the lifecycle's own business.
        if (reason === 'lost') void this.dispatch({ type: 'deposed' });
      },
    });
  }

  private async beginTerm(): Promise<void> {
    const term = new AbortController();
    this.term = term;
    if (this.elector) this.metrics.leaderStatus.set({ name: this.options.name }, 1);
    for (const c of this.controllers) c.start();
    await this.perTerm.start(term.signal);
  }

  /** The lease is gone: controllers halt at once (their queues dropped, in-flight reconciles fenced), per-term runnables stop. */
  private async abortTerm(): Promise<void> {
    const term = this.term;
    this.term = undefined;
    for (const c of this.controllers) c.halt();
    term?.abort(new Error('leadership lost'));
    void this.perTerm.stop();
  }

  /** Controllers stop taking work and finish what is in flight (up to the graceful timeout). */
  private async drainTerm(): Promise<void> {
    const deadline = this.options.gracefulShutdownTimeoutMs ?? 30_000;
    await Promise.all(this.controllers.map((c) => c.stop(deadline)));
    this.term?.abort(new Error('manager stopping'));
    this.term = undefined;
    await this.perTerm.stop();
  }

  private async tearDown(): Promise<void> {
    this.log.info('stopping manager');
    this.abort.abort(new Error('manager stopping'));
    await this.startingUp;
    await this.always.stop();
    await this.electing;
    // Controllers have drained: the ring takes this replica out at once (its Lease released).
    await this.sharding;
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
  }

  private finish() {
    if (this.startError !== undefined) this.started.reject(this.startError);
    else this.log.info('manager stopped');
    this.started.resolve();
    this.stopped.resolve();
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

  private async startServers() {
    const metrics = await serveMetrics(this.options.metricsBindAddress ?? ':8080', {
      render: () => this.metrics.render(),
      contentType: this.metrics.registry.contentType,
      debugQueue: (key) => this.debugQueue(key),
      secure: this.options.metricsSecure ? { client: this.client, name: this.options.name, podName: this.environment.podName, clock: this.clock } : undefined,
      openDebugQueue: this.options.insecureDebugQueue,
      extraRoutes: this.metricsRoutes,
    });
    const probes = await serveProbes(this.options.healthProbeBindAddress ?? ':8081', {
      health: this.healthChecks,
      ready: this.readyChecks,
      cache: this.cacheChecks,
    });
    for (const [name, s] of [
      ['metrics', metrics],
      ['probes', probes],
    ] as const) {
      if (!s) continue;
      this.ports[name] = s.port;
      this.servers.push(s);
    }
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
    const sharding = this.options.sharding;
    if (sharding) {
      // Its own Lease, the coordinator's, the assignment's, and the list of the ring's members.
      perms.push(...permissionsFor([rule(Lease, ['get', 'list', 'create', 'update', 'delete'])], [this.shardingNamespace(sharding)]));
    }
    if (!perms.length) return;
    // An API server that blinks at start-up is no reason to exit: each review retries what is transient.
    const deadline = this.clock.monotonic() + (this.options.cacheSyncTimeoutMs ?? 120_000);
    const missing = await missingPermissions(this.client, perms, {
      ask: (review) =>
        retryTransient(review, {
          clock: this.clock,
          maxMs: Math.max(0, deadline - this.clock.monotonic()),
          signal: this.abort.signal,
          onRetry: (err, inMs) => this.log.warn({ err: err.message, retryInMs: inMs }, 'could not check an RBAC permission; retrying'),
        }),
    });
    if (missing.length) throw new RbacError(missing);
    this.log.info({ permissions: perms.length }, 'RBAC: every declared permission is granted');
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

/** A promise with its resolvers, settled at most once. */
function deferred() {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  // A start-up failure rejects `started` even when nobody awaits start(): never unhandled.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}
