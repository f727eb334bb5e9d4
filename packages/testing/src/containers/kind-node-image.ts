import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cacheRoot, findBinary, versions } from '../assets/binaries.js';
import { toolingDir } from '../e2e/workspace.js';
import { docker, imageId } from './docker.js';
import { ensureImage, LOCAL_PREFIX, PAUSE_IMAGE, recipes, type ImageRecipe } from './local-images.js';
import { withLock } from './lock.js';
import { runLong, say, seconds } from './progress.js';

/** kind's own base-image files (images/base/files) from the sigs.k8s.io/kind module at the pinned version. */
function kindModuleDir(): string {
  const r = spawnSync('go', ['list', '-m', '-json', 'sigs.k8s.io/kind'], {
    cwd: join(toolingDir('control-plane'), 'go/kind'),
    encoding: 'utf8',
    env: { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '-mod=mod' },
  });
  const dir = r.status === 0 ? (JSON.parse(r.stdout) as { Dir?: string }).Dir : undefined;
  if (!dir || !existsSync(join(dir, 'images/base/files')))
    throw new Error(`the sigs.k8s.io/kind ${versions.kind} module is not in the Go module cache: run npm run setup:binaries -- --group kind`);
  return dir;
}

/** A copy of kind's base files with the modes kind's Dockerfile gives them (the module cache is read-only). */
function kindBaseFiles(): string {
  const out = join(cacheRoot(), 'containers', `kind-base-files-${versions.kind}`);
  if (existsSync(out)) return out;
  const tmp = `${out}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  cpSync(join(kindModuleDir(), 'images/base/files'), tmp, { recursive: true });
  const fix = (p: string) => {
    const executable = /\/(usr\/local\/bin|kind\/bin)\/[^/]+$/.test(p);
    if (statSync(p).isDirectory()) {
      chmodSync(p, 0o755);
      for (const e of readdirSync(p)) fix(join(p, e));
    } else chmodSync(p, executable ? 0o755 : 0o644);
  };
  fix(tmp);
  rmSync(join(tmp, 'LICENSES'), { recursive: true, force: true });
  renameSync(tmp, out);
  return out;
}

const nodeBase: ImageRecipe = {
  repository: `${LOCAL_PREFIX}/kind-node-base`,
  version: versions.kubernetes,
  dockerfile: 'kind-node',
  bases: { DEBIAN_IMAGE: 'debian' },
  args: { PAUSE_IMAGE, KUBERNETES_VERSION: versions.kubernetes },
  files: async () => ({
    kind: kindBaseFiles(),
    'bin/kubelet': findBinary('kubelet'),
    'bin/kubeadm': findBinary('kubeadm'),
    'bin/kubectl': findBinary('kubectl'),
  }),
};

/** The images kubeadm and the node run, preloaded into the node's containerd. */
const clusterImages = [
  recipes.kubeApiserver,
  recipes.kubeControllerManager,
  recipes.kubeScheduler,
  recipes.kubeProxy,
  recipes.etcd,
  recipes.coredns,
  recipes.pause,
];

/**
 * kind's node image, built here: the node base (kind-node/Dockerfile) with the cluster's images
 * imported into its containerd, as `kind build node-image` does (a container runs containerd,
 * `ctr images import --no-unpack`, and is committed). Cached by a digest of everything in it.
 */
export async function ensureKindNodeImage(): Promise<string> {
  const base = await ensureImage(nodeBase);
  for (const r of clusterImages) await ensureImage(r);
  const refs = clusterImages.map((r) => r.fixedTag!);
  const digest = createHash('sha256')
    .update(imageId(base)!)
    .update(refs.map((r) => `${r}@${imageId(r)}`).join('\n'))
    .digest('hex')
    .slice(0, 10);
  const tag = `${LOCAL_PREFIX}/kind-node:${versions.kubernetes}-${digest}`;
  if (imageId(tag)) return tag;
  return withLock(
    join(cacheRoot(), 'containers', 'kind-node.lock'),
    async () => {
      if (imageId(tag)) return tag;
      const t0 = Date.now();
      say(`assembling the kind node image ${tag}: importing ${refs.length} images into its containerd…`);
      const dir = mkdtempSync(join(tmpdir(), 'opkit-kind-node-'));
      const name = `opkit-kind-node-build-${process.pid}`;
      try {
        const tar = join(dir, 'images.tar');
        await runLong('docker', ['save', '-o', tar, ...refs], { label: 'saving the cluster images' });
        await docker(['run', '-d', '--name', name, '--privileged', '--tmpfs', '/run', '--tmpfs', '/tmp', '--entrypoint', 'sleep', base, 'infinity']);
        await docker(['exec', name, 'bash', '-c', 'nohup containerd > /tmp/containerd.log 2>&1 &']);
        await docker([
          'exec',
          name,
          'bash',
          '-c',
          'for i in $(seq 1 60); do ctr version >/dev/null 2>&1 && exit 0; sleep 0.5; done; cat /tmp/containerd.log; exit 1',
        ]);
        await runLong(
          'sh',
          [
            '-c',
            `docker exec -i ${name} ctr --namespace=k8s.io images import --label=io.cri-containerd.pinned=pinned --all-platforms --no-unpack --digests - < '${tar}'`,
          ],
          {
            label: 'importing the cluster images',
          },
        );
        const listed = (await docker(['exec', name, 'ctr', '--namespace=k8s.io', 'images', 'list', '-q'])).stdout;
        const missing = refs.filter((r) => !listed.includes(r));
        if (missing.length) throw new Error(`the node's containerd lacks ${missing.join(', ')} after the import`);
        await docker(['exec', name, 'bash', '-c', 'pkill containerd; for i in $(seq 1 40); do pgrep containerd >/dev/null || exit 0; sleep 0.25; done']);
        await docker(['commit', '--change', 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]', name, tag]);
        say(`kind node image ${tag} ready in ${seconds(t0)}`);
        return tag;
      } finally {
        await docker(['rm', '-f', name], { check: false });
        rmSync(dir, { recursive: true, force: true });
      }
    },
    (holder) => say(`waiting for process ${holder}, which is assembling the kind node image…`),
  );
}
