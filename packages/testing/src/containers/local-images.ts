import { createHash } from 'node:crypto';
import { cpSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { findBinary, versions, type BinaryName } from '../assets/binaries.js';
import { toolingDir } from '../e2e/workspace.js';
import { buildKitClient } from './buildkit.js';
import { ensureDebianBase } from './debian-base.js';
import { imageId } from './docker.js';
import { npmPackage } from './downloads.js';
import { goTool } from './go-tools.js';
import { archOf, ensureEmulation, hostPlatform, nodeArch, platformFlag, tagArch, type Platform } from './platforms.js';
import { runLong, say, seconds } from './progress.js';

/** The repository prefix of every image opkit builds in place of an official one. */
export const LOCAL_PREFIX = 'opkit.local';
/** kubeadm's imageRepository for the node image's control plane (kubeadm names images under it). */
export const K8S_REPOSITORY = `${LOCAL_PREFIX}/k8s`;
/** The sandbox image containerd is configured with in the node image. */
export const PAUSE_IMAGE = `${K8S_REPOSITORY}/pause:opkit-1`;

/**
 * An image built here from a Dockerfile under tools/containers/images, in place of an official one
 * (or one the kind node needs). Its tag names its version and a digest of everything it is built
 * from, so an unchanged image is never rebuilt and a changed input always is.
 */
export interface ImageRecipe {
  /** e.g. `opkit.local/node-runtime`. */
  repository: string;
  version: string;
  /** Directory of its Dockerfile under tools/containers/images. */
  dockerfile: string;
  /** Build arguments naming base images: the Debian base, other recipes, or a resolved reference. */
  bases?: Record<string, 'debian' | ImageRecipe | { ref: string }>;
  /** Extra files in the build context, for the platform built: path in the context → file or directory here. */
  files?: (platform: Platform) => Promise<Record<string, string>>;
  /** Plain build arguments. */
  args?: Record<string, string>;
  /** A tag the image must have as well, because something else names it exactly (kubeadm, containerd). */
  fixedTag?: string;
}

const imagesDir = () => join(toolingDir('containers'), 'images');

/** A digest of a file or directory tree by names, sizes and modification times (not contents: binaries are large). */
function fingerprint(path: string, h = createHash('sha256')): ReturnType<typeof createHash> {
  const st = statSync(path);
  if (st.isDirectory()) {
    h.update(`d:${path.split('/').pop()}`);
    for (const e of readdirSync(path).sort()) fingerprint(join(path, e), h);
  } else h.update(`f:${path.split('/').pop()}:${st.size}:${st.mtimeMs}:${st.mode}`);
  return h;
}

/** Hard-links (or copies, across filesystems) `from` into the build context at `to`. */
function stage(from: string, to: string): void {
  mkdirSync(dirname(to), { recursive: true });
  if (statSync(from).isDirectory()) return cpSync(from, to, { recursive: true });
  try {
    linkSync(from, to);
  } catch {
    cpSync(from, to);
  }
}

const built = new Map<ImageRecipe, Map<Platform, Promise<string>>>();

/**
 * Builds the image for `platform` (this machine's by default) if this engine lacks it; its tag
 * either way. Another platform's is built under QEMU (platforms.ts), its bases for that platform too.
 */
export function ensureImage(recipe: ImageRecipe, platform: Platform = hostPlatform()): Promise<string> {
  let perPlatform = built.get(recipe);
  if (!perPlatform) built.set(recipe, (perPlatform = new Map()));
  let p = perPlatform.get(platform);
  if (!p) {
    p = buildImage(recipe, platform);
    perPlatform.set(platform, p);
    p.catch(() => perPlatform.delete(platform));
  }
  return p;
}

async function buildImage(recipe: ImageRecipe, platform: Platform): Promise<string> {
  await ensureEmulation(platform);
  const buildArgs: Record<string, string> = { ...recipe.args };
  for (const [arg, base] of Object.entries(recipe.bases ?? {}))
    buildArgs[arg] = base === 'debian' ? await ensureDebianBase(platform) : 'ref' in base ? base.ref : await ensureImage(base, platform);
  const files = (await recipe.files?.(platform)) ?? {};
  const dockerfileDir = join(imagesDir(), recipe.dockerfile);
  // amd64's digests and tags are what they were before other platforms (tagArch).
  const h = createHash('sha256').update(JSON.stringify(buildArgs) + (archOf(platform) === 'amd64' ? '' : platform));
  // The recipe's own directory by content (its files' times differ in every clone).
  for (const f of readdirSync(dockerfileDir).sort()) h.update(f).update(readFileSync(join(dockerfileDir, f)));
  for (const [name, path] of Object.entries(files).sort()) fingerprint(path, h.update(name));
  const tag = `${recipe.repository}:${recipe.version}-${tagArch(platform)}${h.digest('hex').slice(0, 10)}`;
  if (imageId(tag)) {
    if (recipe.fixedTag) await runLong('docker', ['tag', tag, recipe.fixedTag], { label: 'tagging' });
    return tag;
  }
  const ctx = mkdtempSync(join(tmpdir(), 'opkit-image-'));
  try {
    for (const f of readdirSync(dockerfileDir)) stage(join(dockerfileDir, f), join(ctx, f));
    for (const [name, path] of Object.entries(files)) stage(path, join(ctx, name));
    const t0 = Date.now();
    say(`building ${tag}…`);
    const client = buildKitClient();
    const args = [
      ...client.args,
      '--progress=plain',
      ...platformFlag(platform),
      '-t',
      tag,
      ...(recipe.fixedTag ? ['-t', recipe.fixedTag] : []),
      ...Object.entries(buildArgs).flatMap(([k, v]) => ['--build-arg', `${k}=${v}`]),
      ctx,
    ];
    await runLong(client.command, args, { label: `building ${recipe.repository}`, env: { ...process.env, ...client.env }, echo: /^#\d+ \[.*\] RUN/ });
    say(`built ${tag} in ${seconds(t0)}`);
    return tag;
  } finally {
    rmSync(ctx, { recursive: true, force: true });
  }
}

const bins =
  (...names: BinaryName[]) =>
  async () =>
    Object.fromEntries(names.map((n) => [`bin/${n}`, findBinary(n)]));
/** The binary, and Node's licence with those of the libraries it bundles (OpenSSL, V8, ICU, …), which ships beside it. */
const NODE_MEMBERS = ['bin/node', 'LICENSE'];
/** The official Node binary the images ship and its licence (from the npm package node-linux-<arch>), cached here. */
const node = async (platform: Platform = hostPlatform()) => {
  const dir = await npmPackage(`node-linux-${nodeArch(platform)}`, versions.node, NODE_MEMBERS);
  return { node: join(dir, 'bin/node'), LICENSE: join(dir, 'LICENSE') };
};
/** The official Node binary alone: what the local e2e mode runs in place of the image's. */
export const imageNodeBinary = async () => (await node()).node;

/** The recipes: bases in place of official ones, workload images, and what the kind node needs. */
export const recipes = (() => {
  const nodeBuild: ImageRecipe = {
    repository: `${LOCAL_PREFIX}/node-build`,
    version: `${versions.node}-${versions.debian}`,
    dockerfile: 'node-build',
    bases: { DEBIAN_IMAGE: 'debian' },
    files: async (platform) => ({ ...(await node(platform)), npm: await npmPackage('npm', versions.npm) }),
  };
  const nodeRuntime: ImageRecipe = {
    repository: `${LOCAL_PREFIX}/node-runtime`,
    version: versions.node,
    dockerfile: 'node-runtime',
    bases: { DEBIAN_IMAGE: 'debian' },
    files: node,
  };
  const staticBase: ImageRecipe = { repository: `${LOCAL_PREFIX}/static`, version: versions.debian, dockerfile: 'static', bases: { DEBIAN_IMAGE: 'debian' } };
  const onStatic = (name: string, version: string, binaries: BinaryName[], fixedTag?: string): ImageRecipe => ({
    repository: `${LOCAL_PREFIX}/${name}`,
    version,
    dockerfile: 'binaries',
    bases: { STATIC_IMAGE: staticBase },
    files: bins(...binaries),
    fixedTag,
  });
  return {
    nodeBuild,
    nodeRuntime,
    static: staticBase,
    memcached: {
      repository: `${LOCAL_PREFIX}/memcached`,
      version: versions.debian,
      dockerfile: 'memcached',
      bases: { DEBIAN_IMAGE: 'debian', STATIC_IMAGE: staticBase },
    } as ImageRecipe,
    nginx: { repository: `${LOCAL_PREFIX}/nginx`, version: versions.debian, dockerfile: 'nginx', bases: { DEBIAN_IMAGE: 'debian' } } as ImageRecipe,
    shell: { repository: `${LOCAL_PREFIX}/shell`, version: versions.debian, dockerfile: 'shell', bases: { DEBIAN_IMAGE: 'debian' } } as ImageRecipe,
    pebble: onStatic('pebble', versions.pebble, ['pebble', 'pebble-challtestsrv']),
    traefik: onStatic('traefik', versions.traefik, ['traefik']),
    registry: {
      repository: `${LOCAL_PREFIX}/registry`,
      version: versions.distribution,
      dockerfile: 'registry',
      bases: { STATIC_IMAGE: staticBase },
      files: bins('registry'),
    } as ImageRecipe,
    // The kind node's images, under the names kubeadm asks for with imageRepository opkit.local/k8s.
    kubeApiserver: onStatic('k8s/kube-apiserver', versions.kubernetes, ['kube-apiserver'], `${K8S_REPOSITORY}/kube-apiserver:${versions.kubernetes}`),
    kubeControllerManager: onStatic(
      'k8s/kube-controller-manager',
      versions.kubernetes,
      ['kube-controller-manager'],
      `${K8S_REPOSITORY}/kube-controller-manager:${versions.kubernetes}`,
    ),
    kubeScheduler: onStatic('k8s/kube-scheduler', versions.kubernetes, ['kube-scheduler'], `${K8S_REPOSITORY}/kube-scheduler:${versions.kubernetes}`),
    etcd: onStatic('k8s/etcd', versions.etcd, ['etcd', 'etcdctl'], `${K8S_REPOSITORY}/etcd:${versions.etcd}`),
    kubeProxy: {
      repository: `${K8S_REPOSITORY}/kube-proxy`,
      version: versions.kubernetes,
      dockerfile: 'kube-proxy',
      bases: { DEBIAN_IMAGE: 'debian' },
      files: bins('kube-proxy'),
      fixedTag: `${K8S_REPOSITORY}/kube-proxy:${versions.kubernetes}`,
    } as ImageRecipe,
    coredns: {
      repository: `${K8S_REPOSITORY}/coredns`,
      version: versions.coredns,
      dockerfile: 'coredns',
      bases: { DEBIAN_IMAGE: 'debian', STATIC_IMAGE: staticBase },
      files: bins('coredns'),
      fixedTag: `${K8S_REPOSITORY}/coredns:${versions.coredns}`,
    } as ImageRecipe,
    pause: {
      repository: `${K8S_REPOSITORY}/pause`,
      version: 'opkit',
      dockerfile: 'pause',
      files: async () => ({ 'bin/pause': await goTool('pause') }),
      fixedTag: PAUSE_IMAGE,
    } as ImageRecipe,
  };
})();
