import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { workspaceRoot } from '../e2e/workspace.js';
import { buildKitClient } from './buildkit.js';
import { docker, imageFiles } from './docker.js';
import { ensureImage, recipes } from './local-images.js';
import { imagePlan, OFFICIAL_IMAGES, probeRegistries, type ImageRole, type ImageSource } from './image-plan.js';
import { hostPlatform, platformFlag, type Platform } from './platforms.js';
import { runLong, say, seconds } from './progress.js';
import { spawnSync } from 'node:child_process';

let plan: Promise<Record<ImageRole, ImageSource>> | undefined;

/** This machine's image plan (registries probed once per process); OPKIT_IMAGES forces one source. */
export function currentImagePlan(): Promise<Record<ImageRole, ImageSource>> {
  plan ??= probeRegistries().then((answers) => {
    const p = imagePlan(answers, process.env.OPKIT_IMAGES);
    const local = Object.entries(p)
      .filter(([, s]) => s === 'local')
      .map(([r]) => r);
    say(local.length ? `building locally what no reachable registry serves: ${local.join(', ')}` : 'using the official images');
    return p;
  });
  return plan;
}

/**
 * The image to use for a role: the official reference (an index of every platform), or the local
 * build's tag for `platform` (this machine's by default).
 */
export async function imageFor(role: Exclude<ImageRole, 'kindNode'>, platform: Platform = hostPlatform()): Promise<string> {
  const source = (await currentImagePlan())[role];
  if (source === 'official') return OFFICIAL_IMAGES[role].ref;
  return ensureImage(recipes[role], platform);
}

/** Pebble for the cluster, built from the binaries this repository builds, on the static base of the plan. */
export async function pebbleImage(): Promise<string> {
  return ensureImage({ ...recipes.pebble, bases: { STATIC_IMAGE: { ref: await imageFor('static') } } });
}

/**
 * The CA a TLS-intercepting proxy signs with, for npm inside the build: NODE_EXTRA_CA_CERTS, else
 * npm's own `cafile`. Passed as a BuildKit secret, so it is never stored in an image layer.
 */
export function npmCaFile(): string | undefined {
  const fromEnv = process.env.NODE_EXTRA_CA_CERTS;
  if (fromEnv && existsSync(fromEnv)) return fromEnv;
  const r = spawnSync('npm', ['config', 'get', 'cafile'], { encoding: 'utf8' });
  const cafile = r.status === 0 ? r.stdout.trim() : '';
  return cafile && cafile !== 'null' && existsSync(cafile) ? cafile : undefined;
}

/**
 * The npm registry this machine's npm uses, for the image's `npm ci`: its user config when one is
 * set (NPM_CONFIG_USERCONFIG: where a private registry and its token are named), and whether the
 * registry answers on loopback (a local registry, as the test of a project outside opkit's
 * repository runs).
 */
export function npmRegistryConfig(env = process.env): { userconfig?: string; loopback: boolean } {
  const r = spawnSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8', env, cwd: tmpdir() });
  let loopback = false;
  try {
    loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(r.stdout.trim()).hostname);
  } catch {
    // no registry configured: npm's default
  }
  // Set by the user, not npm's own default (which `npm run` exports as npm_config_userconfig).
  const userconfig = env.NPM_CONFIG_USERCONFIG;
  return { userconfig: userconfig && existsSync(userconfig) ? userconfig : undefined, loopback };
}

/** The commit checked out (with `-dirty` when the work tree has changes), or `unknown` outside git. */
function revision(root: string): string {
  const head = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' });
  if (head.status !== 0) return 'unknown';
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root, encoding: 'utf8' }).stdout.trim();
  return `${head.stdout.trim()}${dirty ? '-dirty' : ''}`;
}

/**
 * `nx run @opkit/<app>:docker-build`: the app's image from apps/Dockerfile, tagged
 * opkit/<app>:<version> (never latest), on the official bases where their registries answer and
 * on bases built here where they do not. `platform`: another than this machine's (a release's
 * arm64 image), with `bases` for it: the runtime base of that platform, the build base of this one.
 */
export async function buildAppImage(app: string, tag?: string, bases?: { nodeBuild: string; nodeRuntime: string }, platform?: Platform): Promise<string> {
  const root = workspaceRoot();
  const version = (JSON.parse(readFileSync(join(root, 'apps', app, 'package.json'), 'utf8')) as { version: string }).version;
  const ref = `opkit/${app}:${tag ?? version}`;
  // A release's bases come pinned by digest (bases.ts); a build for this machine takes the plan's.
  const [buildBase, runtimeBase] = bases ? [bases.nodeBuild, bases.nodeRuntime] : [await imageFor('nodeBuild'), await imageFor('nodeRuntime')];
  const ca = npmCaFile();
  const npm = npmRegistryConfig();
  const t0 = Date.now();
  say(`building ${ref} (FROM ${buildBase}, ${runtimeBase})…`);
  const client = buildKitClient();
  await runLong(
    client.command,
    [
      ...client.args,
      '--progress=plain',
      ...platformFlag(platform),
      '-f',
      'apps/Dockerfile',
      '-t',
      ref,
      '--build-arg',
      `APP=${app}`,
      '--build-arg',
      `VERSION=${version}`,
      '--build-arg',
      `REVISION=${revision(root)}`,
      '--build-arg',
      `NODE_BUILD_IMAGE=${buildBase}`,
      '--build-arg',
      `NODE_RUNTIME_IMAGE=${runtimeBase}`,
      ...(ca ? ['--secret', `id=npm-ca,src=${ca}`] : []),
      ...(npm.userconfig ? ['--secret', `id=npmrc,src=${npm.userconfig}`] : []),
      // A registry on this machine's loopback is reached from the build only on the host's network.
      ...(npm.loopback ? ['--network', 'host'] : []),
      '.',
    ],
    { cwd: root, label: `building ${ref}`, env: { ...process.env, ...client.env }, echo: /^#\d+ \[.*\] RUN/ },
  );
  say(`built ${ref} in ${seconds(t0)}`);
  return ref;
}

/** The licence and notices an app's image carries (apps/Dockerfile's last stage says where), and its labels. */
export async function appImageNotices(ref: string): Promise<{ license: string; thirdParty: string; node: string; labels: Record<string, string> }> {
  const files = await imageFiles(ref, ['/app/LICENSE', '/app/THIRD-PARTY-NOTICES.txt', '/nodejs/LICENSE']);
  const labels = JSON.parse((await docker(['image', 'inspect', '--format', '{{json .Config.Labels}}', ref])).stdout) as Record<string, string>;
  return { license: files['/app/LICENSE']!, thirdParty: files['/app/THIRD-PARTY-NOTICES.txt']!, node: files['/nodejs/LICENSE']!, labels };
}

/**
 * `nx run @opkit/<app>:bundle-image`: the app's OLM bundle (apps/<app>/bundle, from
 * `nx run @opkit/<app>:bundle`) as an image, from apps/<app>/bundle.Dockerfile: FROM scratch, the
 * manifests and metadata, and the bundle's annotations as labels, as `opm` and OLM read them.
 * `contextDir`: a bundle rendered elsewhere (a release's, with its images by digest).
 */
export async function buildBundleImage(app: string, tag?: string, contextDir?: string): Promise<string> {
  const root = workspaceRoot();
  const version = (JSON.parse(readFileSync(join(root, 'apps', app, 'package.json'), 'utf8')) as { version: string }).version;
  const ref = `opkit/${app}-bundle:${tag ?? `v${version}`}`;
  const t0 = Date.now();
  const client = buildKitClient();
  await runLong(client.command, [...client.args, '--progress=plain', '-f', 'bundle.Dockerfile', '-t', ref, '.'], {
    cwd: contextDir ?? join(root, 'apps', app),
    label: `building ${ref}`,
    env: { ...process.env, ...client.env },
  });
  say(`built ${ref} in ${seconds(t0)}`);
  return ref;
}
