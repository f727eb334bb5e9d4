import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { mergeValues } from '../helm/chart.js';
import { vendorChartDependencies } from '../helm/vendor.js';
import { waitFor, waitForQuiet } from '../wait.js';
import type { E2ECluster, E2EMode, Workload } from './cluster.js';
import { kindUnavailable, startKindCluster } from './kind-cluster.js';
import { startLocalCluster, type LocalCluster } from './local-cluster.js';
import type { WorkspaceApp } from './workspace.js';

let announced = false;

/**
 * The modes to run, from OPKIT_E2E_MODE (`local`, `kind`, or both comma-separated; default both).
 * kind is skipped, with its reason, where Docker or kind is missing; the reason is printed once.
 */
export function e2eModes(): E2EMode[] {
  const wanted = (process.env.OPKIT_E2E_MODE ?? 'local,kind')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const modes: E2EMode[] = [];
  if (wanted.includes('local')) modes.push({ name: 'local' });
  if (wanted.includes('kind')) {
    const why = kindUnavailable();
    modes.push({ name: 'kind', skip: why });
    if (why && !announced) {
      announced = true;
      console.warn(
        `e2e: kind mode skipped: ${why}. The local mode runs the same specs; with Docker (or as root on Debian, where opkit installs it) the kind mode runs too.`,
      );
    }
  }
  return modes;
}

export function startE2ECluster(mode: E2EMode['name'], options: { apps: WorkspaceApp[]; workloads?: Workload[]; nodes?: number }): Promise<E2ECluster> {
  // The local mode keeps an audit log, so specs can show who the operator acted as.
  return mode === 'local'
    ? startLocalCluster({ apps: options.apps, nodes: options.nodes, audit: true })
    : startKindCluster({ apps: options.apps, workloads: options.workloads });
}

/**
 * The users the operator's requests were authenticated as (by its user agent, `<name>/opkit`),
 * from the local mode's audit log; undefined in kind, where the kubelet is the evidence.
 */
export function operatorIdentities(cluster: E2ECluster, operatorName: string): string[] | undefined {
  const audit = (cluster as Partial<LocalCluster>).plane?.audit;
  if (!audit) return undefined;
  return [
    ...new Set(
      audit
        .query()
        .filter((e) => e.userAgent?.startsWith(`${operatorName}/`))
        .map((e) => e.impersonatedUser?.username ?? e.user.username),
    ),
  ].sort();
}

/**
 * A node lost with an operator pod on it: its process SIGKILLed (no shutdown, nothing released),
 * then the pod force-deleted, as an operator of the cluster would once the node is known dead.
 */
export async function killOperatorPod(cluster: E2ECluster, namespace: string, pod: string): Promise<void> {
  if (!cluster.killPod) throw new Error(`killOperatorPod: the ${cluster.mode} mode cannot kill a pod's processes`);
  await cluster.killPod(namespace, pod);
  await cluster.kubectl(['delete', 'pod', pod, '-n', namespace, '--force', '--grace-period=0', '--wait=false']);
}

export interface Release {
  release: string;
  namespace: string;
  app: WorkspaceApp;
}

/**
 * `helm upgrade --install` with these values (from the cluster's chart source: the registry in the
 * kind mode, the chart's directory locally), then waits for the operator to serve /readyz.
 */
export async function helmInstall(cluster: E2ECluster, r: Release, values: Record<string, unknown> = {}): Promise<void> {
  if (!r.app.chart) throw new Error(`${r.app.app} has no chart`);
  const merged = mergeValues((await cluster.chartValues?.()) ?? {}, values);
  const source = (await cluster.chartSource?.(r.app, merged)) ?? { chart: r.app.chart, args: [] };
  if (source.chart === r.app.chart) await vendorChartDependencies(r.app.chart);
  const dir = mkdtempSync(join(tmpdir(), 'opkit-values-'));
  try {
    const file = join(dir, 'values.yaml');
    writeFileSync(file, stringify(merged));
    await cluster.helm([
      'upgrade',
      '--install',
      r.release,
      source.chart,
      ...source.args,
      '--namespace',
      r.namespace,
      '--create-namespace',
      '--values',
      file,
      '--wait',
      '--timeout',
      '180s',
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  await cluster.waitOperatorReady(r.namespace, r.release);
}

/**
 * `helm test`: the chart's test Pod runs in the cluster and asks the operator's metrics Service for
 * its metrics; helm fails unless the Pod succeeds (it is deleted then, with its log). Kind mode
 * only: the local mode runs no Services. Returns helm's report.
 */
export async function helmTest(cluster: E2ECluster, r: Release): Promise<string> {
  const res = await cluster.helm(['test', r.release, '--namespace', r.namespace, '--timeout', '120s']);
  return res.stdout;
}

/** The uids of the release's current operator pods. */
export async function operatorPods(cluster: E2ECluster, r: Release): Promise<{ name: string; uid: string; args: string[] }[]> {
  const out = await cluster.kubectl(['get', 'pods', '-n', r.namespace, '-l', `app.kubernetes.io/instance=${r.release}`, '-o', 'json']);
  const items = (
    JSON.parse(out.stdout) as { items: { metadata: { name: string; uid: string; deletionTimestamp?: string }; spec: { containers: { args?: string[] }[] } }[] }
  ).items;
  return items
    .filter((p) => !p.metadata.deletionTimestamp)
    .map((p) => ({ name: p.metadata.name, uid: p.metadata.uid, args: p.spec.containers[0]?.args ?? [] }));
}

/** Deletes the operator's pods (a crash, an eviction) and waits for their replacements to be ready. */
export async function restartOperator(cluster: E2ECluster, r: Release): Promise<void> {
  const before = new Set((await operatorPods(cluster, r)).map((p) => p.uid));
  await cluster.kubectl(['delete', 'pods', '-n', r.namespace, '-l', `app.kubernetes.io/instance=${r.release}`, '--wait=false']);
  await waitFor(
    'replacement operator pods',
    async () => {
      const now = await operatorPods(cluster, r);
      return now.length > 0 && now.every((p) => !before.has(p.uid));
    },
    { timeoutMs: 60_000 },
  );
  await cluster.waitOperatorReady(r.namespace, r.release);
}

/** resourceVersion of every object of these resources in these namespaces: equal snapshots mean nothing was written. */
export async function resourceVersions(cluster: E2ECluster, resources: string[], namespaces: string[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const ns of namespaces) {
    const list = JSON.parse((await cluster.kubectl(['get', resources.join(','), '-n', ns, '-o', 'json'])).stdout) as {
      items: { kind: string; metadata: { name: string; resourceVersion: string } }[];
    };
    for (const o of list.items) out[`${o.kind} ${ns}/${o.metadata.name}`] = o.metadata.resourceVersion;
  }
  return out;
}

/**
 * What an operator's restart wrote (`versionChanges`, `[]` for nothing) to these resources: the
 * snapshot before is taken once nothing in it has changed for three seconds, since a fixed sleep
 * races whatever the previous test left in motion (the garbage collector's cascades, a controller's
 * last status write) on a busy machine; the one after, once the new pod has had `resyncMs` for a
 * full resync of everything it owns.
 */
export async function changesAcrossRestart(
  cluster: E2ECluster,
  r: Release,
  resources: string[],
  namespaces: string[],
  { resyncMs = 8_000 }: { resyncMs?: number } = {},
): Promise<string[]> {
  const snapshot = () => resourceVersions(cluster, resources, namespaces);
  const before = await waitForQuiet(`${resources.join(',')} settled`, snapshot, { quietMs: 3_000, timeoutMs: 60_000, intervalMs: 1_000 });
  await restartOperator(cluster, r);
  await new Promise((res) => setTimeout(res, resyncMs));
  return versionChanges(before, await snapshot());
}

/**
 * What differs between two `resourceVersions` snapshots, one line per object ("created", "gone",
 * "written"), sorted. Asserting this is `[]` names the objects in the one-line failure a CI log keeps,
 * where a deep-equal of two maps says only "{ …(14) } to deeply equal { …(16) }".
 */
export function versionChanges(before: Record<string, string>, after: Record<string, string>): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(after)) {
    if (!(k in before)) out.push(`created: ${k}`);
    else if (before[k] !== v) out.push(`written: ${k}`);
  }
  for (const k of Object.keys(before)) if (!(k in after)) out.push(`gone: ${k}`);
  return out.sort();
}

/**
 * Objects a field manager wrote that still exist, across all namespaces, except those `keep`
 * names on purpose. After its CRs are deleted and its chart uninstalled, an operator should have
 * left nothing.
 */
export async function leftovers(
  cluster: E2ECluster,
  fieldManager: string,
  resources: string[],
  keep: (o: { kind: string; namespace?: string; name: string }) => boolean = () => false,
): Promise<string[]> {
  const list = JSON.parse((await cluster.kubectl(['get', resources.join(','), '-A', '-o', 'json', '--show-managed-fields'])).stdout) as {
    items: { kind: string; metadata: { name: string; namespace?: string; managedFields?: { manager?: string }[] } }[];
  };
  return list.items
    .filter((o) => o.metadata.managedFields?.some((f) => f.manager === fieldManager))
    .map((o) => ({ kind: o.kind, namespace: o.metadata.namespace, name: o.metadata.name }))
    .filter((o) => !keep(o))
    .map((o) => `${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name}`);
}
