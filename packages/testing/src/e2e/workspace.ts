import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { LocalImage } from './pod-runner.js';

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

/** An app of this repository as it ships: chart, image, bundle. */
export interface WorkspaceApp {
  app: string;
  /** charts/<app>, when the app has a chart. */
  chart?: string;
  image: { repository: string; tag: string };
  /** apps/<app>/dist/main.js: what the image runs. */
  bundle: string;
  /** The environment its Dockerfile sets. */
  env: Record<string, string>;
}

/** The ENV instructions of a Dockerfile's last stage (`ENV A=1 \ B=2`, one level of quoting). */
export function dockerfileEnv(text: string): Record<string, string> {
  const stages = text.replace(/\\\r?\n/g, ' ').split(/^FROM\s/im);
  const env: Record<string, string> = {};
  for (const line of stages[stages.length - 1].split('\n')) {
    const m = line.match(/^\s*ENV\s+(.*)$/i);
    if (!m) continue;
    for (const [, k, v] of m[1].matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S*)/g)) env[k] = v.replace(/^"|"$/g, '');
  }
  return env;
}

export function workspaceApp(app: string, root = workspaceRoot()): WorkspaceApp {
  const dir = join(root, 'apps', app);
  if (!existsSync(join(dir, 'package.json'))) throw new Error(`no app ${app} under ${join(root, 'apps')}`);
  const version = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
  const chart = join(root, 'charts', app);
  const dockerfile = join(dir, 'Dockerfile');
  return {
    app,
    chart: existsSync(join(chart, 'Chart.yaml')) ? chart : undefined,
    image: { repository: `opkit/${app}`, tag: version },
    bundle: join(dir, 'dist/main.js'),
    env: existsSync(dockerfile) ? dockerfileEnv(readFileSync(dockerfile, 'utf8')) : {},
  };
}

/** What the pod runner and ingress stand-in need to "run" these apps' images locally. */
export function localImages(apps: WorkspaceApp[]): Record<string, LocalImage> {
  return Object.fromEntries(apps.map((a) => [a.image.repository, { entrypoint: a.bundle, env: a.env }]));
}

/** Fails early, naming the build command, when an app has not been built. */
export function requireBuilt(apps: WorkspaceApp[]): void {
  const missing = apps.filter((a) => !existsSync(a.bundle));
  if (missing.length) {
    throw new Error(`not built: ${missing.map((a) => a.bundle).join(', ')}. Run: npx nx run-many -t build -p ${missing.map((a) => `@opkit/${a.app}`).join(' ')}`);
  }
}
