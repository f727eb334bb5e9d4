import { spawnSync } from 'node:child_process';

/**
 * How to run a BuildKit build with the docker clients of this machine. The Dockerfiles use
 * BuildKit (`RUN --mount=type=secret` for a proxy's CA, cache mounts), which every Docker >= 23
 * has through buildx; a client without buildx (docker 23+ built without the plugin) falls back to
 * the legacy builder, so an older client whose BuildKit is built in (Debian's docker.io 20.10) is
 * used instead where one exists.
 */
export interface BuildKitClient {
  command: string;
  /** Arguments before the build's own (`buildx build --load` or `build`). */
  args: string[];
  env: NodeJS.ProcessEnv;
}

const clientVersion = (docker: string) => {
  const r = spawnSync(docker, ['version', '--format', '{{.Client.Version}}'], { encoding: 'utf8', timeout: 20_000 });
  return r.status === 0 ? r.stdout.trim() : /^\s*Version:\s*(\S+)/m.exec(r.stdout)?.[1];
};

/** Picks the client: buildx where installed, else a pre-23 client with built-in BuildKit. */
export function chooseBuildKitClient(clients: { path: string; version?: string; buildx: boolean }[]): BuildKitClient | { unavailable: string } {
  const withBuildx = clients.find((c) => c.buildx);
  if (withBuildx) return { command: withBuildx.path, args: ['buildx', 'build', '--load'], env: {} };
  const builtIn = clients.find((c) => c.version && Number(c.version.split('.')[0]) < 23);
  if (builtIn) return { command: builtIn.path, args: ['build'], env: { DOCKER_BUILDKIT: '1' } };
  const seen =
    clients
      .filter((c) => c.version)
      .map((c) => `${c.path} ${c.version}`)
      .join(', ') || 'none';
  return { unavailable: `no docker client here can build with BuildKit (seen: ${seen}); install the buildx plugin` };
}

let chosen: BuildKitClient | undefined;

export function buildKitClient(): BuildKitClient {
  if (chosen) return chosen;
  const paths = [...new Set(['docker', '/usr/bin/docker'])];
  const clients = paths.map((path) => ({
    path,
    version: clientVersion(path),
    buildx: spawnSync(path, ['buildx', 'version'], { encoding: 'utf8', timeout: 20_000 }).status === 0,
  }));
  const c = chooseBuildKitClient(clients);
  if ('unavailable' in c) throw new Error(c.unavailable);
  chosen = c;
  return c;
}
