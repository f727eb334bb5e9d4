import { docker } from './docker.js';
import type { Platform } from './platforms.js';
import { runLong } from './progress.js';

/** An image as a registry holds it: what a chart pins. */
export interface PushedImage {
  /** The registry's host (`localhost:5001`, `ghcr.io`). */
  registry: string;
  /** The repository within it (`opkit/memcached-operator`, `acme/operators/memcached-operator`). */
  repository: string;
  /** The repository the charts' values name the image by before publishing (`opkit/memcached-operator`). */
  source: string;
  tag: string;
  /** The manifest's digest, as the registry computed it. */
  digest: string;
  /** `registry/repository@digest`: the reference a pod pins. */
  ref: string;
}

/** The manifest media types a registry may answer with; asking for all keeps it from converting. */
export const MANIFEST_TYPES = [
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.docker.distribution.manifest.v2+json',
];

/**
 * The digest a push gave `registry/repository`, from the image's RepoDigests (docker records the
 * manifest digest the registry accepted, per repository). Taken from the push itself, not by
 * reading the tag back: another push to the same tag meanwhile cannot swap it. Pure.
 */
export function pushedDigest(repoDigests: string[], registry: string, repository: string): string {
  const prefix = `${registry}/${repository}@`;
  const found = repoDigests.find((d) => d.startsWith(prefix))?.slice(prefix.length);
  if (!found || !/^sha256:[0-9a-f]{64}$/.test(found))
    throw new Error(`no sha256 digest for ${registry}/${repository} among the image's RepoDigests (${repoDigests.join(', ') || 'none'})`);
  return found;
}

/**
 * Tags a local image into the registry, pushes it (layers it holds already are skipped; TLS and
 * credentials as docker has them) and returns its digest there. `source` is the repository the
 * charts name it by (default: `repository`).
 */
export async function pushImage(local: string, registry: string, repository: string, tag: string, source = repository): Promise<PushedImage> {
  const target = `${registry}/${repository}:${tag}`;
  await docker(['tag', local, target]);
  await runLong('docker', ['push', target], { label: `pushing ${target}` });
  const repoDigests = JSON.parse((await docker(['image', 'inspect', '--format', '{{json .RepoDigests}}', target])).stdout) as string[] | null;
  const digest = pushedDigest(repoDigests ?? [], registry, repository);
  return { registry, repository, source, tag, digest, ref: `${registry}/${repository}@${digest}` };
}

/**
 * Points `repository:tag` at a manifest the registry already holds (by digest), as `crane tag`
 * does: the manifest is read and put back under the tag, byte for byte, so its digest (and every
 * signature made for that digest) stays what it was.
 */
export async function tagManifest(registry: string, repository: string, digest: string, tag: string): Promise<void> {
  const base = `http://${registry}/v2/${repository}/manifests`;
  const got = await fetch(`${base}/${digest}`, { headers: { accept: MANIFEST_TYPES.join(', ') } });
  if (!got.ok) throw new Error(`${registry}/${repository}@${digest}: the registry answered ${got.status}`);
  const body = Buffer.from(await got.arrayBuffer());
  const put = await fetch(`${base}/${tag}`, { method: 'PUT', headers: { 'content-type': got.headers.get('content-type') ?? MANIFEST_TYPES[1]! }, body });
  if (!put.ok) throw new Error(`tagging ${registry}/${repository}@${digest} as ${tag}: the registry answered ${put.status} ${await put.text()}`);
  if (put.headers.get('docker-content-digest') !== digest)
    throw new Error(`${registry}/${repository}:${tag} is ${put.headers.get('docker-content-digest')}, not ${digest}`);
}

/** One platform's image in an index. */
export interface PlatformImage {
  platform: Platform;
  image: PushedImage;
}

/** An image pushed for several platforms: the index (its `ref` is what a chart pins) and each platform's own. */
export interface PushedIndex extends PushedImage {
  platforms: PlatformImage[];
}

/** The digest `docker manifest push` printed (its last line): `sha256:<64 hex>`, or a clear error. Pure. */
export function manifestPushDigest(stdout: string, target: string): string {
  const last = stdout.trim().split('\n').pop()?.trim() ?? '';
  if (!/^sha256:[0-9a-f]{64}$/.test(last)) throw new Error(`docker manifest push ${target} printed no digest: ${JSON.stringify(stdout.slice(-200))}`);
  return last;
}

/**
 * Pushes the index (a manifest list) of images already pushed to `registry/repository`, one per
 * platform, under `tag`, with docker's own `manifest` commands (so a registry's credentials are
 * docker's, as for the images), and returns its digest: the one reference a pod on any of the
 * platforms pulls by.
 */
export async function pushIndex(
  parts: PlatformImage[],
  registry: string,
  repository: string,
  tag: string,
  opts: { plainHttp: boolean; source?: string },
): Promise<PushedIndex> {
  const target = `${registry}/${repository}:${tag}`;
  const insecure = opts.plainHttp ? ['--insecure'] : [];
  // A list left in docker's local store by an earlier run would be amended, not replaced.
  await docker(['manifest', 'rm', target]).catch(() => undefined);
  await docker(['manifest', 'create', ...insecure, target, ...parts.map((p) => p.image.ref)]);
  const pushed = await docker(['manifest', 'push', '--purge', ...insecure, target]);
  const digest = manifestPushDigest(pushed.stdout, target);
  return { registry, repository, source: opts.source ?? repository, tag, digest, ref: `${registry}/${repository}@${digest}`, platforms: parts };
}
