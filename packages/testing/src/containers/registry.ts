import { join } from 'node:path';
import { cacheRoot, versions } from '../assets/binaries.js';
import { buildToolset } from '../assets/build-toolset.js';
import { waitFor } from '../wait.js';
import { docker } from './docker.js';
import { imageFor } from './images.js';
import { ensureImage, recipes } from './local-images.js';
import { withLock } from './lock.js';
import { say } from './progress.js';

/** The registry's container: one per machine, kept between runs (its blobs are a cache). */
export const REGISTRY_CONTAINER = 'opkit-registry';
/** The port it listens on inside its container, and so on the kind network. */
const CONTAINER_PORT = 5000;

/**
 * The local OCI registry (CNCF distribution), as kind's local-registry guide sets it up: a
 * container published on 127.0.0.1 of this host, joined to the `kind` network, and named in each
 * node's containerd configuration. Images and charts have one name everywhere, `host/…`: on this
 * host it is the published port; on the nodes containerd's hosts.toml sends it to the container.
 */
export interface LocalRegistry {
  /** `localhost:<port>`: what image references and `oci://` URLs name, on this host and in the cluster. */
  host: string;
  /** Where containers on the kind network reach it: `opkit-registry:5000`. */
  inNetwork: string;
}

/** What `docker inspect` says of the registry container, when there is one. */
export interface RegistryContainerState {
  image: string;
  running: boolean;
  /** The host port its :5000 is published on. */
  hostPort?: number;
}

export type RegistryAction = 'create' | 'start' | 'replace' | 'use';

/**
 * What to do with the registry container, from what is there: pure, so each case is table-tested.
 * A container of another image, or published elsewhere, is replaced (its contents are a cache:
 * every run pushes what it installs); a stopped one is started (dockerd restarted since).
 */
export function registryAction(state: RegistryContainerState | undefined, want: { image: string; hostPort: number }): RegistryAction {
  if (!state) return 'create';
  if (state.image !== want.image || state.hostPort !== want.hostPort) return 'replace';
  return state.running ? 'use' : 'start';
}

/** The port on 127.0.0.1 the registry is published on: $OPKIT_REGISTRY_PORT, else 5001 (kind's guide's). */
export function registryPort(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.OPKIT_REGISTRY_PORT;
  if (raw === undefined || raw === '') return 5001;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`OPKIT_REGISTRY_PORT=${raw} is not a TCP port`);
  return port;
}

async function inspect(): Promise<RegistryContainerState | undefined> {
  const r = await docker(['container', 'inspect', '--format', '{{json .}}', REGISTRY_CONTAINER], { check: false });
  if (r.code !== 0) return undefined;
  const c = JSON.parse(r.stdout) as {
    Config: { Image: string };
    State: { Running: boolean };
    HostConfig: { PortBindings?: Record<string, { HostPort: string }[] | null> };
  };
  const bound = c.HostConfig.PortBindings?.[`${CONTAINER_PORT}/tcp`]?.[0]?.HostPort;
  return { image: c.Config.Image, running: c.State.Running, hostPort: bound ? Number(bound) : undefined };
}

/** The registry's image: distribution's registry built here (from its Go module, once), on the static base of this machine's image plan. */
export async function registryImage(): Promise<string> {
  await buildToolset(['--only', 'registry'], '[containers]');
  return ensureImage({ ...recipes.registry, bases: { STATIC_IMAGE: { ref: await imageFor('static') } } });
}

/** Starts the local registry if it is not running (once per machine, under a lock) and waits until it answers. */
export async function ensureLocalRegistry(): Promise<LocalRegistry> {
  const hostPort = registryPort();
  const host = `localhost:${hostPort}`;
  const image = await registryImage();
  await withLock(join(cacheRoot(), 'containers', 'registry.lock'), async () => {
    const action = registryAction(await inspect(), { image, hostPort });
    if (action === 'replace') await docker(['rm', '--force', REGISTRY_CONTAINER]);
    if (action === 'create' || action === 'replace') {
      say(`starting the local registry ${REGISTRY_CONTAINER} (distribution ${versions.distribution}) on ${host}`);
      await docker(['run', '--detach', '--restart=always', '--name', REGISTRY_CONTAINER, '--publish', `127.0.0.1:${hostPort}:${CONTAINER_PORT}`, image]);
    } else if (action === 'start') await docker(['start', REGISTRY_CONTAINER]);
  });
  await waitFor(
    `the local registry at http://${host}/v2/`,
    async () => {
      const res = await fetch(`http://${host}/v2/`);
      return res.ok || undefined;
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
  return { host, inNetwork: `${REGISTRY_CONTAINER}:${CONTAINER_PORT}` };
}

/**
 * containerd's registry host configuration for one registry (hosts.toml under
 * /etc/containerd/certs.d/<host>/): pulls of `host/…` go to the registry's container over plain
 * HTTP on the kind network. Pure.
 */
export function containerdHostsToml(registry: LocalRegistry): string {
  return [`[host."http://${registry.inNetwork}"]`, '  capabilities = ["pull", "resolve"]', ''].join('\n');
}

/**
 * KEP-1755's ConfigMap: tells tools in the cluster (Tilt, skaffold, …) where its local registry
 * is, as kind's guide publishes it. Pure.
 */
export function localRegistryHostingConfigMap(registry: LocalRegistry): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'local-registry-hosting', namespace: 'kube-public' },
    data: {
      'localRegistryHosting.v1': [`host: "${registry.host}"`, 'help: "https://kind.sigs.k8s.io/docs/user/local-registry/"', ''].join('\n'),
    },
  };
}

/**
 * Makes the kind cluster's nodes pull `registry.host/…` from the registry: the registry joins the
 * `kind` network (kind creates it with the first cluster), and each node gets the hosts.toml
 * containerd reads on every pull (no restart: the cluster's config_path patch points there).
 */
export async function connectRegistryToKind(registry: LocalRegistry, nodes: string[]): Promise<void> {
  const networks = (await docker(['container', 'inspect', '--format', '{{json .NetworkSettings.Networks}}', REGISTRY_CONTAINER])).stdout;
  if (!(JSON.parse(networks) as Record<string, unknown>).kind) {
    // Suites starting clusters in parallel may both connect it: the second finds it done.
    const r = await docker(['network', 'connect', 'kind', REGISTRY_CONTAINER], { check: false });
    if (r.code !== 0 && !/already exists/.test(r.stderr)) throw new Error(`connecting ${REGISTRY_CONTAINER} to the kind network: ${r.stderr.trim()}`);
  }
  const dir = `/etc/containerd/certs.d/${registry.host}`;
  for (const node of nodes) {
    await docker(['exec', node, 'mkdir', '-p', dir]);
    await docker(['exec', '-i', node, 'cp', '/dev/stdin', `${dir}/hosts.toml`], { input: containerdHostsToml(registry) });
  }
}
