import {
  ConfigMap,
  contentHash,
  controllerFor,
  mergeRules,
  Deployment,
  Service,
  type Condition,
  type ObjectOf,
  type ReconcileContext,
  type Request,
} from '@opkit/runtime';
import { CdnCluster, type CdnClusterObject } from '../../api/v1/cdncluster.js';
import { CONNECTIONS_PER_REPLICA, renderNginxConfig, type Route } from '../../nginx/render.js';
import { findCycle } from './graph.js';
import { MANAGED_BY } from './labels.js';
import { configMapName, desiredConfigMap, desiredDeployment, desiredService } from './resources.js';
import { validateSpec } from './validate.js';
import { cdnRbac } from './rbac.js';

type Status = NonNullable<CdnClusterObject['status']>;
type State = NonNullable<Status['state']>;

/** Only what this operator made is cached, not every ConfigMap, Deployment and Service in the cluster. */
export const OWNED = { labelSelector: `app.kubernetes.io/managed-by=${MANAGED_BY}` };
const sourceNames = (c: CdnClusterObject) => (c.spec.sources ?? []).map((s) => s.name);

/** Everything a reconcile decided about a cluster, before it is written to its status. */
interface Verdict {
  state: State;
  message: string;
  sources: Omit<Condition, 'lastTransitionTime' | 'observedGeneration' | 'type'>;
  config: Omit<Condition, 'lastTransitionTime' | 'observedGeneration' | 'type'>;
  routes?: Route[];
  deployment?: ObjectOf<typeof Deployment>;
  configHash?: string;
}

function available(c: CdnClusterObject, dep: ObjectOf<typeof Deployment> | undefined) {
  const want = c.spec.replicas;
  const s = dep?.status ?? {};
  const current = !!dep && (s.observedGeneration ?? 0) >= (dep.metadata.generation ?? 0);
  const ready = current && (s.updatedReplicas ?? 0) >= want && (s.readyReplicas ?? 0) >= want && (s.replicas ?? 0) === want;
  return { ready, readyReplicas: s.readyReplicas ?? 0, want };
}

async function writeStatus(c: CdnClusterObject, v: Verdict, ctx: ReconcileContext) {
  const gen = c.metadata.generation;
  let conditions = (c.status?.conditions as Condition[] | undefined) ?? [];
  conditions = ctx.setCondition(conditions, { type: 'SourcesReady', ...v.sources, observedGeneration: gen });
  conditions = ctx.setCondition(conditions, { type: 'ConfigValid', ...v.config, observedGeneration: gen });
  const a = available(c, v.deployment);
  conditions = ctx.setCondition(
    conditions,
    v.deployment
      ? {
          type: 'Available',
          status: a.ready ? 'True' : 'False',
          reason: a.ready ? 'AllPodsReady' : 'PodsNotReady',
          message: `${a.readyReplicas}/${a.want} pods ready`,
          observedGeneration: gen,
        }
      : { type: 'Available', status: 'False', reason: 'NotDeployed', message: 'nothing is deployed for this cluster', observedGeneration: gen },
  );
  const status: Status = {
    state: v.state,
    message: v.message,
    observedGeneration: gen,
    readyReplicas: a.readyReplicas,
    ...((v.configHash ?? c.status?.configHash) ? { configHash: v.configHash ?? c.status?.configHash } : {}),
    // For the Sources column: the source names, or "origin" for a cache served by its origin alone.
    ...(sourceNames(c).length || c.spec.origin ? { sourceNames: sourceNames(c).join(',') || 'origin' } : {}),
    // Without new routes (a cycle, invalid input) the last resolved upstreams stay on record.
    upstreams: v.routes
      ? v.routes.map((r) => ({
          name: r.name,
          ...(r.pathCondition ? { pathCondition: r.pathCondition } : {}),
          ...(r.address ? { address: r.address } : {}),
          ready: !!r.address && r.maxConns !== 0,
        }))
      : (c.status?.upstreams ?? []),
    conditions,
  };
  await ctx.updateStatus(CdnCluster.kind, c, status);
}

/** Records an event when the condition's reason or message differs from what the status shows. */
function onChange(c: CdnClusterObject, type: string, next: { reason: string; message: string }, emit: () => void) {
  const prev = c.status?.conditions?.find((x) => x.type === type);
  if (!prev || prev.reason !== next.reason || prev.message !== next.message) emit();
}

export async function reconcileCdnCluster(settings: CdnSettings, req: Request, ctx: ReconcileContext): Promise<void> {
  const { cache, recorder } = ctx;
  const c = await cache.get(CdnCluster.kind, req);
  if (!c || c.metadata.deletionTimestamp) return; // owned objects go with it (owner references)

  const namespace = c.metadata.namespace!;
  const inNamespace = new Map((await cache.list(CdnCluster.kind, { namespace })).map((x) => [x.metadata.name, x]));
  const currentDep = await cache.get(Deployment, req, OWNED);
  const deployed = !!currentDep;
  const ok = { status: 'True' as const, reason: 'AsExpected', message: '' };

  // A cycle can never become ready: say so, and deploy nothing for it.
  const cycle = findCycle(c.metadata.name, (n) => (inNamespace.has(n) ? sourceNames(inNamespace.get(n)!) : undefined));
  if (cycle) {
    const message = `dependency cycle: ${cycle.join(' → ')}`;
    onChange(c, 'SourcesReady', { reason: 'DependencyCycle', message }, () => recorder.warning(c, 'DependencyCycle', message));
    return writeStatus(
      c,
      { state: 'Error', message, sources: { status: 'False', reason: 'DependencyCycle', message }, config: ok, deployment: currentDep },
      ctx,
    );
  }

  // Bad input: refuse it, keep whatever last good configuration is running.
  const problems = validateSpec(c);
  if (problems.length) {
    const message = problems.join('; ');
    onChange(c, 'ConfigValid', { reason: 'InvalidSpec', message }, () => recorder.warning(c, 'InvalidSpec', message));
    return writeStatus(
      c,
      {
        state: deployed ? 'Degraded' : 'Error',
        message: deployed ? `${message} (still serving the last valid configuration)` : message,
        sources: ok,
        config: { status: 'False', reason: 'InvalidSpec', message },
        deployment: currentDep,
      },
      ctx,
    );
  }

  // Resolve every source to its Service address; its capacity follows its replicas.
  const routes: Route[] = [];
  const missing: string[] = [];
  const notDeployed: string[] = [];
  for (const s of c.spec.sources ?? []) {
    const src = inNamespace.get(s.name);
    const svc = src && (await cache.get(Service, { namespace, name: s.name }, OWNED));
    const ip = svc?.spec?.clusterIP;
    if (!src) missing.push(s.name);
    else if (!ip || ip === 'None') notDeployed.push(s.name);
    routes.push({
      name: s.name,
      pathCondition: s.pathCondition,
      ...(src && ip && ip !== 'None' ? { address: `${ip}:80`, maxConns: CONNECTIONS_PER_REPLICA * src.spec.replicas } : {}),
    });
  }
  if (c.spec.origin && !routes.some((r) => !r.pathCondition)) routes.push({ name: 'origin', address: c.spec.origin });

  const unresolved = [...missing, ...notDeployed];
  if (unresolved.length && !deployed) {
    // Never deployed: wait. The source's own creation or deployment reconciles us again (index).
    const message = [missing.length ? `not found: ${missing.join(', ')}` : '', notDeployed.length ? `not deployed yet: ${notDeployed.join(', ')}` : '']
      .filter(Boolean)
      .join('; ');
    onChange(c, 'SourcesReady', { reason: missing.length ? 'SourceNotFound' : 'SourceNotDeployed', message }, () => {
      for (const name of missing) recorder.warning(c, 'SourceNotFound', `Source ${name} not found, will retry later`);
    });
    return writeStatus(
      c,
      {
        state: 'WaitingSource',
        message: `waiting for sources (${message})`,
        sources: { status: 'False', reason: missing.length ? 'SourceNotFound' : 'SourceNotDeployed', message },
        config: ok,
        routes,
      },
      ctx,
    );
  }

  // Deploy: configuration, then the pods that mount it, then the Service in front.
  const config = renderNginxConfig({ namespace, name: c.metadata.name, role: c.spec.role, routes, resolver: settings.resolver });
  const configHash = contentHash(config);
  const cm = await ctx.apply(ConfigMap, desiredConfigMap(c, config), await cache.get(ConfigMap, { namespace, name: configMapName(req.name) }, OWNED));
  const dep = await ctx.apply(Deployment, desiredDeployment(c, configHash), currentDep);
  await ctx.apply(Service, desiredService(c), await cache.get(Service, req, OWNED));
  if (dep.outcome === 'created') recorder.normal(c, 'Deployed', `Deployed ${c.spec.replicas} nginx ${c.spec.role} pods with ${routes.length} route(s)`);
  else if (cm.outcome === 'updated') recorder.normal(c, 'ConfigUpdated', `nginx configuration updated (${configHash}); rolling out`);

  if (unresolved.length) {
    // Deployed before: never torn down for a lost source. Its route answers 503; the rest serve.
    const message = `lost source(s): ${unresolved.join(', ')}; their routes answer 503 until they return`;
    onChange(c, 'SourcesReady', { reason: 'SourceLost', message }, () => recorder.warning(c, 'SourceLost', message));
    return writeStatus(
      c,
      { state: 'Degraded', message, sources: { status: 'False', reason: 'SourceLost', message }, config: ok, routes, deployment: dep.obj, configHash },
      ctx,
    );
  }
  const a = available(c, dep.obj);
  return writeStatus(
    c,
    {
      state: a.ready ? 'Running' : 'Deploying',
      message: a.ready ? `${a.want} pods serve ${routes.length} route(s)` : `${a.readyReplicas}/${a.want} pods ready`,
      sources: { status: 'True', reason: 'AllSourcesFound', message: `${routes.length} route(s) resolved` },
      config: { status: 'True', reason: 'Rendered', message: `configuration ${configHash}` },
      routes,
      deployment: dep.obj,
      configHash,
    },
    ctx,
  );
}

/** Settings of the controller, from the operator's flags. */
export interface CdnSettings {
  /** The DNS server nginx resolves origins named by host with (per request): the cluster's DNS. */
  resolver: string;
}

/**
 * CdnCluster → ConfigMap + Deployment + Service, with dependency mapping: when a cluster is created,
 * changed or deleted, every cluster naming it as a source is reconciled again, found through a
 * cache index (rebuilt from the API on every start, so a restart loses nothing).
 */
export const cdnClusterController = (settings: CdnSettings) =>
  controllerFor(CdnCluster.kind)
    .withRbac(cdnRbac)
    // Clusters name their sources: a source's change reconciles every cluster naming it, found through
    // a cache index the declaration keeps (rebuilt from the API on every start).
    .references(CdnCluster.kind, sourceNames)
    .owns(ConfigMap, { informer: OWNED })
    .owns(Deployment, { informer: OWNED })
    .owns(Service, { informer: OWNED })
    .withOptions({ maxConcurrentReconciles: 2, errorCondition: 'Available' })
    .reconcile((req, ctx) => reconcileCdnCluster(settings, req, ctx));

/** Every rule the controller needs (its own and those its declarations add): the chart's roles. */
export const CDN_RULES = mergeRules(cdnClusterController({ resolver: '127.0.0.1' }).rbac);
