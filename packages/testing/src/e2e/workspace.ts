import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { dockerfileImageConfig, localEnv, type LocalImage } from './image-command.js';

/** The repository root: the nearest directory above `from` holding nx.json. */
export function workspaceRoot(from = process.cwd()): string {
  let dir = resolve(from);
  while (!existsSync(join(dir, 'nx.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`no nx.json above ${from}: run from inside the opkit repository`);
    dir = up;
  }
  return dir;
}

/**
 * A directory of opkit's tooling (`control-plane`, `containers`, `olm`: the Go wrappers the
 * binaries are built from, the base images' Dockerfiles): this repository's `tools/<dir>`, or, in a
 * project made outside it, the copy @opkit/testing ships (`dist/tooling/<dir>`, written when the
 * package is staged for publishing: release/stage.ts). A workspace's own copy wins.
 */
export function toolingDir(dir: 'control-plane' | 'containers' | 'olm', root = workspaceRoot()): string {
  const own = join(root, 'tools', dir);
  if (existsSync(own)) return own;
  // Found through the workspace's node_modules, not import.meta: the CLIs run bundled as CommonJS.
  const shipped = join(dirname(createRequire(join(root, 'package.json')).resolve('@opkit/testing/package.json')), 'dist/tooling', dir);
  if (existsSync(shipped)) return shipped;
  throw new Error(`opkit's tooling directory ${dir} is neither at ${own} nor shipped with @opkit/testing (${shipped})`);
}

/** The one Dockerfile every Node app's image is built from (`--build-arg APP=<app>`). */
export const appsDockerfile = (root = workspaceRoot()) => join(root, 'apps', 'Dockerfile');

/** An app of this repository as it ships: chart, image, bundle. */
export interface WorkspaceApp {
  app: string;
  /** charts/<app>, when the app has a chart. */
  chart?: string;
  image: { repository: string; tag: string };
  /** apps/<app>/dist/main.js: what the image runs. */
  bundle: string;
  /** The image as the local e2e mode runs it: its command and env from the Dockerfile, its files here. */
  local: LocalImage;
}

export function workspaceApp(app: string, root = workspaceRoot()): WorkspaceApp {
  const dir = join(root, 'apps', app);
  if (!existsSync(join(dir, 'package.json'))) throw new Error(`no app ${app} under ${join(root, 'apps')}`);
  const version = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
  const chart = join(root, 'charts', app);
  const dockerfile = appsDockerfile(root);
  const bundle = join(dir, 'dist/main.js');
  const config = dockerfileImageConfig(existsSync(dockerfile) ? readFileSync(dockerfile, 'utf8') : '');
  return {
    app,
    chart: existsSync(join(chart, 'Chart.yaml')) ? chart : undefined,
    image: { repository: `opkit/${app}`, tag: version },
    bundle,
    // The image's Node and its bundle are, here, this Node and the app's build output; its
    // preloaded allocator is this machine's copy where it has one.
    local: { ...config, env: localEnv(config.env), files: { '/nodejs/bin/node': process.execPath, '/app/main.js': bundle } },
  };
}

/** What the pod runner and ingress stand-in need to "run" these apps' images locally. */
export function localImages(apps: WorkspaceApp[]): Record<string, LocalImage> {
  return Object.fromEntries(apps.map((a) => [a.image.repository, a.local]));
}

/** Fails early, naming the build command, when an app has not been built. */
export function requireBuilt(apps: WorkspaceApp[]): void {
  const missing = apps.filter((a) => !existsSync(a.bundle));
  if (missing.length) {
    throw new Error(
      `not built: ${missing.map((a) => a.bundle).join(', ')}. Run: npx nx run-many -t build -p ${missing.map((a) => `@opkit/${a.app}`).join(' ')}`,
    );
  }
}

/** The apps shipped as images (those with a `docker-build` target): the operators, the ACME solver, and any app generated since. */
export function imageApps(root = workspaceRoot()): string[] {
  return readdirSync(join(root, 'apps'))
    .filter((a) => {
      const pkg = join(root, 'apps', a, 'package.json');
      return existsSync(pkg) && !!(JSON.parse(readFileSync(pkg, 'utf8')) as { nx?: { targets?: Record<string, unknown> } }).nx?.targets?.['docker-build'];
    })
    .sort();
}
