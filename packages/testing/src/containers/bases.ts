// The app images' two bases (Node to build with, Node to run on), pinned by digest for a release:
// an official base by the digest its registry serves; a base built here (where no registry that
// serves the official ones answers) pushed beside the release's images, under <path>/base/, and
// named by the digest that push returns. Every image a release builds then names its bases by
// digest, and says which in its labels (org.opencontainers.image.base.name).
import type { ImageRole } from './image-plan.js';
import { docker } from './docker.js';
import { imageFor } from './images.js';
import { hostPlatform, type Platform } from './platforms.js';
import { pushImage } from './push.js';
import { say } from './progress.js';

export interface PinnedBases {
  nodeBuild: string;
  nodeRuntime: string;
}

/** Images this machine built, which no registry serves until they are pushed. */
export const isLocalBuild = (ref: string) => ref.startsWith('opkit.local/');

/** `name[:tag]` → its repository and tag (the last `:` after the last `/` starts the tag). Pure. */
export function splitRef(ref: string): { repository: string; tag?: string } {
  const at = ref.lastIndexOf(':');
  return at > ref.lastIndexOf('/') ? { repository: ref.slice(0, at), tag: ref.slice(at + 1) } : { repository: ref };
}

/**
 * The digest reference of an official base among docker's RepoDigests (`node@sha256:…`), kept with
 * its tag for people (`node:24.21.0-bookworm-slim@sha256:…`). Pure.
 */
export function officialPin(ref: string, repoDigests: string[]): string {
  const { repository, tag } = splitRef(ref);
  const short = repository.replace(/^docker\.io\/(library\/)?/, '');
  const match = repoDigests.find((d) => [repository, short, `docker.io/${repository}`, `docker.io/library/${short}`].includes(d.slice(0, d.indexOf('@'))));
  if (!match) throw new Error(`${ref}: no digest from its registry among ${JSON.stringify(repoDigests)}`);
  return `${repository}${tag ? `:${tag}` : ''}${match.slice(match.indexOf('@'))}`;
}

async function pinBase(role: Exclude<ImageRole, 'kindNode'>, name: string, registry: string, path: string, platform: Platform): Promise<string> {
  const ref = await imageFor(role, platform);
  if (isLocalBuild(ref)) {
    const { tag } = splitRef(ref);
    const pushed = await pushImage(ref, registry, `${path}/base/${name}`, tag ?? 'latest', ref);
    say(`base ${ref} published as ${pushed.ref}`);
    return pushed.ref;
  }
  // An official base is an index of every platform: its digest pins each of them. Pulled for this
  // machine's platform only (docker's store holds one per tag).
  await docker(['pull', '--quiet', ref]);
  const digests = JSON.parse((await docker(['image', 'inspect', '--format', '{{json .RepoDigests}}', ref])).stdout) as string[] | null;
  return officialPin(ref, digests ?? []);
}

/**
 * Both bases, pinned (see the file's comment), for each platform's images pushed to
 * `registry`/`path`: the runtime base of that platform, and for all of them the one build base of
 * this machine's platform, where the build stages run (apps/Dockerfile), pinned once.
 */
export async function pinnedBases(registry: string, path: string, platforms: readonly Platform[]): Promise<Map<Platform, PinnedBases>> {
  const nodeBuild = await pinBase('nodeBuild', 'node-build', registry, path, hostPlatform());
  const out = new Map<Platform, PinnedBases>();
  for (const p of platforms) out.set(p, { nodeBuild, nodeRuntime: await pinBase('nodeRuntime', 'node-runtime', registry, path, p) });
  return out;
}
