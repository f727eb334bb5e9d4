import { KubeConfig } from '@kubernetes/client-node';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { stringify } from 'yaml';
import { defaultAssetsDir, findBinary } from '../assets/binaries.js';
import { buildToolset } from '../assets/build-toolset.js';
import { docker, imageId } from '../containers/docker.js';
import { cannotProvideEngine, dockerServerVersion, ensureEngine } from '../containers/engine.js';
import { imageFor, pebbleImage } from '../containers/images.js';
import { ensureKindToolset } from '../containers/kind-toolset.js';
import { say, seconds } from '../containers/progress.js';
import { connectRegistryToKind, ensureLocalRegistry, localRegistryHostingConfigMap } from '../containers/registry.js';
import { generateKeyPair } from '../containers/sign.js';
import { helmHomeEnv } from '../helm/chart.js';
import { publishCharts, publishImages } from '../release/publish.js';
import { verifySignedChart } from '../helm/signed-chart.js';
import { run, type RunOptions } from '../run.js';
import { AuditLog } from '../control-plane/audit.js';
import { AUDIT_POLICY } from '../control-plane/apiserver.js';
import type { E2ECluster, Workload } from './cluster.js';
import type { WorkspaceApp } from './workspace.js';
import { which } from '../containers/which.js';

/** Why the kind mode cannot run on this machine, or undefined when it can (perhaps after installing and building). */
export function kindUnavailable(): string | undefined {
  if (process.env.OPKIT_CONTAINER_ENGINE === 'none') return 'OPKIT_CONTAINER_ENGINE=none';
  if (!dockerServerVersion()) {
    const why = cannotProvideEngine();
    if (why) return why;
  }
  if (!which('kind') && !existsSync(join(defaultAssetsDir(), 'kind')) && !which('go')) return '`kind` is not on PATH, and Go (to build it) is not installed';
  return undefined;
}

export interface KindClusterOptions {
  /**
   * A cluster to use, or $KIND_CLUSTER: reused if it exists (and then kept). Default: opkit-<first
   * app>, created fresh (one left by an earlier run is replaced) and deleted at the end.
   */
  name?: string;
  /** Apps whose images are built (fixed, non-latest tags) and pushed to the local registry, and whose charts are published there pinned to them. */
  apps: WorkspaceApp[];
  /** Other images the specs run: official where their registry answers, else built here. */
  workloads?: Workload[];
}

const LOAD_TIMEOUT = 15 * 60_000;

/**
 * The `kind` e2e mode: a kind cluster on this machine's Docker engine (installed and started by
 * opkit where it may), with kind's own node image where Docker Hub answers and the node image
 * built here where not. The apps ship as they would to a user: their images built and pushed to
 * the local OCI registry, their charts packaged with those images pinned by digest and pushed
 * beside them, and every install `helm install oci://…`, the nodes pulling the images from the
 * registry. Workload images the specs run (nginx, Pebble, …) are `kind load`ed. A cluster it
 * creates it deletes at the end (OPKIT_KIND_KEEP=1 keeps it); a cluster reused through
 * $KIND_CLUSTER must have been created by this mode (its containerd reads the registry's hosts.toml).
 */
export async function startKindCluster(options: KindClusterOptions): Promise<E2ECluster> {
  const t0 = Date.now();
  const engine = await ensureEngine();
  if (!engine.available) throw new Error(`kind mode unavailable: ${engine.reason}`);
  const toolset = await ensureKindToolset(engine.quirks);
  const named = options.name ?? process.env.KIND_CLUSTER;
  const name = named ?? `opkit-${options.apps[0]?.app ?? 'e2e'}`;
  const exec = (cmd: string, args: string[], opts: RunOptions = {}) => run(cmd, args, { timeoutMs: LOAD_TIMEOUT, ...opts });
  const dir = mkdtempSync(join(tmpdir(), 'opkit-kind-'));

  let existing = (await exec(toolset.kind, ['get', 'clusters'])).stdout.split('\n').map((l) => l.trim());
  if (!named && existing.includes(name)) {
    // Left by an earlier run (kept with OPKIT_KIND_KEEP=1, or interrupted): specs expect a fresh cluster.
    say(`deleting kind cluster ${name}, left by an earlier run`);
    await exec(toolset.kind, ['delete', 'cluster', '--name', name]);
    existing = existing.filter((c) => c !== name);
  }
  const created = !existing.includes(name);
  const auditDir = join(dir, 'audit');
  // A cluster reused through $KIND_CLUSTER keeps no audit log this run can read.
  const audit = created ? new AuditLog(join(auditDir, 'audit.log')) : undefined;
  if (created) {
    say(`creating kind cluster ${name}${toolset.nodeImage ? ` from ${toolset.nodeImage}` : ''}…`);
    const config = join(dir, 'kind.yaml');
    // The API server keeps an audit log in a host directory the node mounts, as the local mode's does.
    mkdirSync(auditDir, { recursive: true });
    writeFileSync(join(auditDir, 'policy.yaml'), AUDIT_POLICY);
    writeFileSync(config, stringify(toolset.config({ auditDir, apiServerFeatureGates: ['ShardedListAndWatch'] })));
    const image = toolset.nodeImage ? ['--image', toolset.nodeImage] : [];
    await exec(toolset.kind, ['create', 'cluster', '--name', name, ...image, '--config', config, '--wait', '180s']);
  } else say(`reusing kind cluster ${name}`);
  const kubeconfigPath = join(dir, 'kubeconfig');
  writeFileSync(kubeconfigPath, (await exec(toolset.kind, ['get', 'kubeconfig', '--name', name])).stdout);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  const kubectl = (args: string[], opts: RunOptions = {}) => run(findBinary('kubectl'), [`--kubeconfig=${kubeconfigPath}`, ...args], opts);
  const helmEnv = { ...process.env, ...helmHomeEnv(join(dir, 'helm')) };

  const registry = await ensureLocalRegistry();
  const nodes = (await exec(toolset.kind, ['get', 'nodes', '--name', name])).stdout.split('\n').filter(Boolean);
  await connectRegistryToKind(registry, nodes);
  await kubectl(['apply', '-f', '-'], { input: JSON.stringify(localRegistryHostingConfigMap(registry)) });
  // Published as a release is (the release command's publishing phase, for these apps): each
  // image signed with its SBOM attestation, then each chart pinned to them and signed, with a key
  // pair made for this cluster; the installs below verify against its public key.
  const signing = { plainHttp: true, home: join(dir, 'sigstore') };
  await buildToolset(['--only', 'cosign,syft'], '[containers]'); // built once, from their Go modules
  const key = await generateKeyPair(join(dir, 'signing'));
  const target = { host: registry.host, path: 'opkit', plainHttp: true };
  const pushed = await publishImages(
    options.apps.map((a) => a.app),
    target,
    { key, home: signing.home },
    dir,
  );
  const published = await publishCharts(
    options.apps.filter((a) => a.chart).map((a) => a.app),
    pushed,
    target,
    { key, home: signing.home },
    helmEnv,
  );
  const charts = new Map(published.map((c) => [c.name, c]));

  const load = async (ref: string) => {
    if (!imageId(ref)) await docker(['pull', ref]); // an official image not pulled yet
    await exec(toolset.kind, ['load', 'docker-image', ref, '--name', name]);
  };
  const images: Partial<Record<Workload, string>> = {};
  for (const w of options.workloads ?? []) {
    // Pebble is built here from the binaries this repository builds, on either base.
    images[w] = w === 'pebble' ? await pebbleImage() : await imageFor(w);
    await load(images[w]!);
  }
  say(
    `kind cluster ${name} ready in ${seconds(t0)}: ${pushed.length} images and ${charts.size} charts in ${registry.host}, ${Object.keys(images).length} workload images loaded`,
  );

  const instance = (release: string) => `app.kubernetes.io/instance=${release}`;
  return {
    mode: 'kind',
    kubeConfig,
    kubeconfigPath,
    images,
    published: { registry: registry.host, images: pushed, charts: [...charts.values()], key, signing },
    kubectl,
    helm: (args, opts = {}) => run(findBinary('helm'), [...args, '--kubeconfig', kubeconfigPath], { ...opts, env: { ...helmEnv, ...opts.env } }),
    async chartSource(app, values) {
      const chart = app.chart ? charts.get(basename(app.chart)) : undefined;
      if (!chart) throw new Error(`${app.app}: no chart was published for this cluster (apps: ${options.apps.map((a) => a.app).join(', ')})`);
      // Verified as a user's installer would: the version's digest now, its signature, its images'.
      const verified = await verifySignedChart({
        repository: chart.ref.slice('oci://'.length),
        version: chart.version,
        publicKey: key.publicKey,
        ...signing,
        helmEnv,
        values,
      });
      return { chart: verified.ref, args: ['--plain-http'] };
    },
    async waitOperatorReady(namespace, release, timeoutMs = 180_000) {
      const deps = (await kubectl(['get', 'deployments', '-n', namespace, '-l', instance(release), '-o', 'name'])).stdout.split('\n').filter(Boolean);
      for (const d of deps) await kubectl(['rollout', 'status', d, '-n', namespace, `--timeout=${Math.round(timeoutMs / 1000)}s`]);
    },
    auditEvents: audit && (async () => audit.query()),
    async killPod(namespace, pod) {
      // SIGKILL to every process of the pod, found on the node by the POD_NAME and POD_NAMESPACE the
      // chart gives its containers (the node image built here has no crictl; its processes share the node's PID namespace).
      const script = [
        'for e in /proc/[0-9]*/environ; do',
        `  if tr '\\0' '\\n' < "$e" 2>/dev/null | grep -qx 'POD_NAME=${pod}' && tr '\\0' '\\n' < "$e" | grep -qx 'POD_NAMESPACE=${namespace}'; then`,
        '    p=${e#/proc/}; kill -9 "${p%/environ}" && echo "killed ${p%/environ}"',
        '  fi',
        'done 2>/dev/null',
      ].join('\n');
      const out = await docker(['exec', nodes[0]!, 'sh', '-c', script]);
      if (!/killed \d+/.test(out.stdout)) throw new Error(`no process of pod ${namespace}/${pod} found on ${nodes[0]}`);
    },
    async operatorLogs(namespace, release) {
      return (await kubectl(['logs', '-n', namespace, '-l', instance(release), '--tail=40', '--prefix', '--all-containers'], { check: false })).stdout;
    },
    async operatorOutput(namespace, release) {
      const pods = JSON.parse((await kubectl(['get', 'pods', '-n', namespace, '-l', instance(release), '-o', 'json'])).stdout) as {
        items: { metadata: { name: string; deletionTimestamp?: string } }[];
      };
      const lines: string[] = [];
      for (const p of pods.items.filter((x) => !x.metadata.deletionTimestamp)) {
        lines.push(...(await kubectl(['logs', '-n', namespace, p.metadata.name, '--all-containers'])).stdout.split('\n').filter(Boolean));
      }
      return lines;
    },
    async stop() {
      if (created && process.env.OPKIT_KIND_KEEP !== '1') {
        say(`deleting kind cluster ${name} (OPKIT_KIND_KEEP=1 keeps it)`);
        await exec(toolset.kind, ['delete', 'cluster', '--name', name], { check: false });
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
