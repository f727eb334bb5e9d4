// Client
export { Client, type ClientOptions, type ListOptions, type WriteOptions, type ApplyOptions, type DeleteOptions, type PatchType } from './client/client.js';
export { Transport, type TransportOptions, type RequestSpec } from './client/transport.js';
export { RESTMapper, KindNotServedError, type DiscoveredResource } from './client/discovery.js';
export { ProxyConfigError, ProxyTunnelError } from './client/proxy.js';
export { ApiServerLiveness, type LivenessOptions } from './client/liveness.js';
export { sleep, systemClock, type Clock } from './clock/clock.js';
export {
  ApiError,
  ConnectionError,
  isNotFound,
  isAlreadyExists,
  isConflict,
  isGone,
  isTooManyRequests,
  isInvalid,
  isForbidden,
  isUnauthorized,
  isTransient,
  type Status,
} from './client/errors.js';
export {
  defineKind,
  apiVersionOf,
  resourcePath,
  resourceName,
  kindKey,
  type Kind,
  type ObjectOf,
  Pod,
  Service,
  ConfigMap,
  Secret,
  ServiceAccount,
  Endpoints,
  CoreEvent,
  Namespace,
  Node,
  Deployment,
  ReplicaSet,
  Lease,
  Ingress,
  CustomResourceDefinition,
  Role,
  RoleBinding,
  ClusterRole,
  ClusterRoleBinding,
  MutatingWebhookConfiguration,
  ValidatingWebhookConfiguration,
  TokenReview,
  SubjectAccessReview,
} from './client/kind.js';
export {
  keyOf,
  parseKey,
  type Cached,
  type KubeObject,
  type ObjectList,
  type ObjectKey,
  type ObjectMeta,
  type OwnerReference,
  type Wire,
} from './client/types.js';
export { TokenBucket } from './client/rate-limiter.js';

// Cache
export { Cache, KindInformer, CacheSyncError, MissingInformerError, type CacheOptions, type CacheListOptions, type InformerOptions } from './cache/cache.js';
export { Informer, type EventHandler } from './cache/informer.js';
export { Watcher, type WatcherOptions, type WatcherHealth } from './cache/watcher.js';
export { Store, type IndexFunc } from './cache/store.js';
export { parseLabelSelector, formatLabelSelector, labelSelectorMatcher, SelectorError, type LabelSelector } from './cache/label-selector.js';
export { deepFreeze, thaw } from './cache/freeze.js';

// Queue
export { finishing, type EventPriority } from './controller/event-priority.js';
export { Priority, WorkQueue, type QueueMetrics, type WorkQueueOptions } from './queue/work-queue.js';
export {
  ItemExponentialRateLimiter,
  BucketRateLimiter,
  MaxOfRateLimiter,
  defaultControllerRateLimiter,
  DEFAULT_MAX_ITEM_BACKOFF_MS,
  type RateLimiter,
} from './queue/rate-limiters.js';

// Controllers
export { controllerFor, ControllerBuilder, referenceIndex, type ControllerDefinition, type IndexSpec } from './controller/builder.js';
export { ReferenceReader } from './controller/reference-reader.js';
export { type Trigger, type ReconcileRecord } from './controller/provenance.js';
export {
  Controller,
  ReconcileTimeoutError,
  DEFAULT_RECONCILE_TIMEOUT_MS,
  DEFAULT_RESYNC_PERIOD_MS,
  type Reconciler,
  type ControllerOptions,
} from './controller/controller.js';
export { type ReconcileContext, type ReadClient, type FinalizeOptions } from './controller/reconcile-context.js';
export { compareResourceVersions } from './controller/read-your-writes.js';
export { TerminalError, requestKey, type Request, type Result } from './controller/result.js';
export { requestForObject, requestsForOwner, type MapFunc, type MapContext } from './controller/handlers.js';
export {
  generationChanged,
  resourceVersionChanged,
  labelsChanged,
  annotationsChanged,
  hasLabels,
  and,
  or,
  not,
  type Predicate,
} from './controller/predicates.js';

// Manager
export { Manager, leaderIdentity, type ManagerOptions, type Runnable, type HealthCheck } from './manager/manager.js';
export type { Reply, Route } from './manager/http-server.js';
export { runOperator, operatorUsage, parseOperatorFlags, type OperatorDefinition } from './manager/run-operator.js';
export { LeaderElector, microTime, type LeaderElectionConfig, type LeadershipCallbacks } from './manager/leader-election.js';
export type { ElectionTiming } from './manager/leader-election-state.js';
export { ShardMember, memberLeaseName, ASSIGNMENT_ANNOTATION, RING_LABEL, type ShardMemberConfig, type ShardListener } from './sharding/member.js';
export { controllersListener } from './sharding/listener.js';
export { shardHash, hashLiteral } from './sharding/hash.js';
export { shardSelector, type HashRange, type RangeSet, type ShardField } from './sharding/ranges.js';
export { ring, plan, target, holdings, handOver, parseAssignment, formatAssignment, type Assignment, type Slice } from './sharding/assignment.js';
export { parseDuration, formatDuration, goDuration, DurationError, MAX_DURATION_MS } from './helpers/duration.js';
export {
  flag,
  parseFlags,
  flagHelp,
  flagName,
  MANAGER_FLAGS,
  FlagError,
  type Flag,
  type FlagDefinitions,
  type FlagValues,
  type ManagerFlags,
} from './manager/flags.js';
export { operatorEnvironment, instanceName, ENVIRONMENT_HELP, type OperatorEnvironment } from './manager/environment.js';
export { loadKubeConfig, currentNamespace } from './manager/kubeconfig.js';
export { KubeConfig, type ClusterAccess } from './client/kubeconfig.js';
export { RbacError, missingPermissions, permissionsFor, describePermission, type Permission } from './manager/rbac-check.js';

// Helpers
export {
  setCondition,
  settleMessage,
  getCondition,
  isConditionTrue,
  removeCondition,
  rfc3339,
  type Condition,
  type ConditionInput,
} from './helpers/conditions.js';
export {
  controllerReference,
  setControllerReference,
  controllerOf,
  isControlledBy,
  AlreadyOwnedError,
  CONTROLLER_INDEX,
  byController,
} from './helpers/owner.js';
export { hasFinalizer } from './helpers/finalizers.js';
export { contentHash, APPLIED_HASH_ANNOTATION, type ApplyOutcome } from './helpers/apply.js';
export { deepEqual, isSubset } from './helpers/equality.js';
export { EventRecorder, EventsV1Event, type EventType, type EventRecorderOptions } from './events/recorder.js';
export { RuntimeMetrics } from './metrics/metrics.js';
export { createLogger, silentLogger, type Logger, type LoggerOptions } from './log/logger.js';

// CRDs
export { defineCustomResource, type CustomResource, type CustomObject, type CustomResourceDefinitionSpec, type PrinterColumn } from './crd/custom-resource.js';
export { defineVersionedResource, spoke, CONVERSION_PATH, type VersionedResource, type Spoke } from './crd/versioned-resource.js';
export { toStructural, type JSONSchemaProps } from './crd/structural-schema.js';
export { Quantity, ResourceRequirements, Conditions } from './crd/schemas.js';
export { renderCrdTemplate, renderCrdYaml, type AnyResource } from './crd/render.js';
export { generatedFilesCommand, syncGeneratedFiles } from './crd/generated-files.js';
export { mergeValuesSchema, renderValuesSchema, renderValuesYaml } from './crd/chart-values.js';
export { undescribedFields } from './crd/descriptions.js';

// RBAC
export { rule, mergeRules, renderRulesTemplate, type PolicyRule, type Verb } from './rbac/rules.js';

// Webhooks
export {
  mutatingWebhook,
  validatingWebhook,
  webhookPath,
  type AdmissionWebhook,
  type AdmissionRequest,
  type UserInfo,
  type Operation,
  type Denial,
  type WebhookScope,
  type WebhookLabelSelector,
} from './webhook/admission.js';
export { Converter } from './webhook/conversion.js';
export { webhookConfigurations, withConversionClient, type ClientConfig } from './webhook/configuration.js';
export { renderWebhooksTemplate } from './webhook/chart.js';
export { diffPatch, type PatchOp } from './webhook/json-patch.js';
export { issueCa, issueServing, type KeyPair } from './webhook/self-signed.js';
export { decideRotation, type RotationDecision } from './webhook/rotation.js';
export { ServingCertificates, everyReplicaFieldManager, type ServingCertificateOptions } from './webhook/serving-certificates.js';
export { WebhookServer } from './webhook/server.js';
export { type WebhookOptions } from './webhook/webhooks.js';

// Tracing
export { Tracer, type Span, type SpanData, type SpanSink, type AttributeValue } from './tracing/tracer.js';
export { OtlpExporter, otlpJson, type OtlpExporterOptions } from './tracing/otlp-exporter.js';
