import { KubeConfig } from '@kubernetes/client-node';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findBinary } from '../assets/binaries.js';
import { run, type RunOptions } from '../run.js';
import type { E2ECluster } from './cluster.js';
import { workspaceRoot, type WorkspaceApp } from './workspace.js';

/** Why the kind mode cannot run on this machine, or undefined when it can. */
export function kindUnavailable(): string | undefined {
  const has = (cmd: string, args: string[]) => spawnSync(cmd, args, { encoding: 'utf8', timeout: 20_000 });
  const docker = has('docker', ['--version']);
  if (docker.error) return '`docker` is not on PATH';
  if (has('kind', ['version']).error) return '`kind` is not on PATH';
  if (has('docker', ['info', '--format', '{{.ServerVersion}}']).status !== 0) return 'no Docker engine is reachable (`docker info` failed)';
  return undefined;
}

/** An extra image the specs need in the cluster, built from a directory. */
export interface ContextImage {
  ref: string;
  context: string;
  dockerfile: string;
}

export interface KindClusterOptions {
  /** Default: $KIND_CLUSTER or opkit-e2e. */
  name?: string;
  /** Apps whose images are built (fixed, non-latest tags) and loaded into the nodes. */
  apps: WorkspaceApp[];
  images?: ContextImage[];
}

const step = (msg: string) => console.log(`[kind] ${msg}`);

/**
 * The `kind` e2e mode: a kind cluster (reused if it exists, created otherwise and deleted at the
 * end unless OPKIT_KIND_KEEP=1), this repository's images built with their version tags and
 * loaded with `kind load docker-image`, so charts install with their default image references and
 * `IfNotPresent` never reaches for a registry.
 */
export async function startKindCluster(options: KindClusterOptions): Promise<E2ECluster> {
  const why = kindUnavailable();
  if (why) throw new Error(`kind mode unavailable: ${why}`);
  const name = options.name ?? process.env.KIND_CLUSTER ?? 'opkit-e2e';
  const root = workspaceRoot();
  const exec = (cmd: string, args: string[], opts: RunOptions = {}) => run(cmd, args, { timeoutMs: 15 * 60_000, ...opts });

  const existing = (await exec('kind', ['get', 'clusters'])).stdout.split('\n').map((l) => l.trim());
  const created = !existing.includes(name);
  if (created) {
    step(`creating cluster ${name} (the first time pulls the kind node image)…`);
    await exec('kind', ['create', 'cluster', '--name', name, '--wait', '180s']);
  } else step(`reusing cluster ${name}`);
  const dir = mkdtempSync(join(tmpdir(), 'opkit-kind-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  writeFileSync(kubeconfigPath, (await exec('kind', ['get', 'kubeconfig', '--name', name])).stdout);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);

  for (const app of options.apps) {
    const ref = `${app.image.repository}:${app.image.tag}`;
    step(`building ${ref}…`);
    await exec(process.execPath, [join(root, 'tools/docker/build-image.mjs'), app.app, '--tag', app.image.tag], { cwd: root });
    step(`loading ${ref} into ${name}`);
    await exec('kind', ['load', 'docker-image', ref, '--name', name]);
  }
  for (const img of options.images ?? []) {
    step(`building ${img.ref}…`);
    await exec('docker', ['build', '-t', img.ref, '-f', img.dockerfile, img.context]);
    await exec('kind', ['load', 'docker-image', img.ref, '--name', name]);
  }

  const helmHome = join(dir, 'helm');
  const kubectl = (args: string[], opts: RunOptions = {}) => run(findBinary('kubectl'), [`--kubeconfig=${kubeconfigPath}`, ...args], opts);
  const instance = (release: string) => `app.kubernetes.io/instance=${release}`;
  return {
    mode: 'kind',
    kubeConfig,
    kubeconfigPath,
    kubectl,
    helm: (args, opts = {}) =>
      run(findBinary('helm'), [...args, '--kubeconfig', kubeconfigPath], {
        ...opts,
        env: { ...process.env, HELM_CACHE_HOME: join(helmHome, 'cache'), HELM_CONFIG_HOME: join(helmHome, 'config'), HELM_DATA_HOME: join(helmHome, 'data'), ...opts.env },
      }),
    async waitOperatorReady(namespace, release, timeoutMs = 180_000) {
      const deps = (await kubectl(['get', 'deployments', '-n', namespace, '-l', instance(release), '-o', 'name'])).stdout.split('\n').filter(Boolean);
      for (const d of deps) await kubectl(['rollout', 'status', d, '-n', namespace, `--timeout=${Math.round(timeoutMs / 1000)}s`]);
    },
    async operatorLogs(namespace, release) {
      return (await kubectl(['logs', '-n', namespace, '-l', instance(release), '--tail=40', '--prefix', '--all-containers'], { check: false })).stdout;
    },
    async stop() {
      if (created && process.env.OPKIT_KIND_KEEP !== '1') {
        step(`deleting cluster ${name} (OPKIT_KIND_KEEP=1 keeps it)`);
        await exec('kind', ['delete', 'cluster', '--name', name], { check: false });
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
