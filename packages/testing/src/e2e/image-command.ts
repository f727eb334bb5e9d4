import { existsSync } from 'node:fs';
import { basename, join, posix } from 'node:path';

/**
 * What the local e2e mode knows of one of this repository's images, to run its containers as
 * local processes exactly as a container runtime would start them.
 */
export interface LocalImage {
  /** ENTRYPOINT and CMD as the image has them: its Dockerfile's, or its base image's. */
  entrypoint: string[];
  cmd: string[];
  /** The image's working directory (relative paths in its command are resolved against it). */
  workdir: string;
  /** Environment the image sets itself (ENV). */
  env: Record<string, string>;
  /** Files inside the image → files on this machine: the Node binary, the app's bundle. */
  files: Record<string, string>;
}

/**
 * The command a container runs, by the Kubernetes rule: `command` replaces the image's
 * ENTRYPOINT (and drops its CMD); `args` alone replace only the CMD.
 */
export function containerArgv(container: { command?: string[]; args?: string[] }, image: Pick<LocalImage, 'entrypoint' | 'cmd'>): string[] {
  if (container.command?.length) return [...container.command, ...(container.args ?? [])];
  return [...image.entrypoint, ...(container.args ?? image.cmd)];
}

/**
 * That command as a local process: paths the image knows are mapped to this machine's files;
 * everything else is passed as it is, so a wrong command fails here as it would in the container.
 */
export function localProcess(argv: string[], image: LocalImage): { file: string; args: string[] } {
  const [command, ...args] = argv;
  if (command === undefined) throw new Error('the container has no command: the image sets no ENTRYPOINT or CMD and the pod no command');
  const inImage = (p: string) => (p.startsWith('/') ? p : posix.join(image.workdir, p));
  const map = (p: string) => image.files[inImage(p)] ?? image.files[p];
  const file = map(command);
  if (!file) throw new Error(`cannot run ${command} locally: the image's known files are ${Object.keys(image.files).join(', ')}`);
  return { file, args: args.map((a) => (a.startsWith('-') ? a : (map(a) ?? a))) };
}

/** ENTRYPOINT and CMD of the base images this repository's Dockerfiles start from. */
const BASE_DEFAULTS: { match: RegExp; entrypoint: string[]; cmd: string[]; workdir: string }[] = [
  // distroless nodejs (and opkit's local equivalent): `ENTRYPOINT ["/nodejs/bin/node"]`.
  { match: /distroless\/nodejs|NODE_RUNTIME_IMAGE/, entrypoint: ['/nodejs/bin/node'], cmd: [], workdir: '/' },
];

const execForm = (s: string): string[] => {
  const t = s.trim();
  if (t.startsWith('[')) return JSON.parse(t) as string[];
  return ['/bin/sh', '-c', t]; // shell form
};

/** ENTRYPOINT, CMD, WORKDIR and ENV of a Dockerfile's last stage, with its base's defaults. */
export function dockerfileImageConfig(text: string): Pick<LocalImage, 'entrypoint' | 'cmd' | 'workdir' | 'env'> {
  const joined = text.replace(/\\\r?\n/g, ' ');
  const stages = joined.split(/^FROM\s/im);
  const last = stages[stages.length - 1] ?? '';
  const from = last.split('\n')[0] ?? '';
  const base = BASE_DEFAULTS.find((b) => b.match.test(from));
  const config = { entrypoint: base?.entrypoint ?? [], cmd: base?.cmd ?? [], workdir: base?.workdir ?? '/', env: {} as Record<string, string> };
  let ownCmd = false;
  for (const line of last.split('\n')) {
    const m = /^\s*(ENTRYPOINT|CMD|WORKDIR|ENV)\s+(.*)$/i.exec(line);
    const [, instr = '', rest = ''] = m ?? [];
    if (!m) continue;
    switch (instr.toUpperCase()) {
      case 'ENTRYPOINT':
        config.entrypoint = execForm(rest);
        if (!ownCmd) config.cmd = []; // setting ENTRYPOINT drops a CMD inherited from the base
        break;
      case 'CMD':
        config.cmd = execForm(rest);
        ownCmd = true;
        break;
      case 'WORKDIR':
        config.workdir = posix.resolve(config.workdir, rest.trim());
        break;
      case 'ENV':
        for (const [, k = '', v = ''] of rest.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S*)/g)) config.env[k] = v.replace(/^"|"$/g, '');
        break;
    }
  }
  return config;
}

/** Where this machine's dynamic linker keeps shared libraries, by Debian's multiarch layout first. */
const LIBRARY_DIRS = (() => {
  const multiarch = { x64: 'x86_64-linux-gnu', arm64: 'aarch64-linux-gnu' }[process.arch as string];
  return [...(multiarch ? [`/usr/lib/${multiarch}`, `/lib/${multiarch}`] : []), '/usr/lib64', '/usr/lib', '/lib'];
})();

/** A shared library of this machine by its file name (libjemalloc.so.2), or undefined. */
export function hostLibrary(name: string, dirs = LIBRARY_DIRS): string | undefined {
  return dirs.map((d) => join(d, name)).find((p) => existsSync(p));
}

/** The libraries an environment preloads (`LD_PRELOAD`: separated by spaces or colons, as ld.so reads it). */
export const preloaded = (env: Record<string, string | undefined>): string[] => (env.LD_PRELOAD ?? '').split(/[\s:]+/).filter(Boolean);

/**
 * The image's environment for a local process. `LD_PRELOAD` names libraries inside the image (the
 * allocator the Dockerfile copies in); each is looked up on this machine by its file name, and one
 * this machine lacks is left out (the process runs on glibc's malloc) rather than passed on, which
 * would make the dynamic linker print an error at every start.
 */
export function localEnv(env: Record<string, string>, library = hostLibrary): Record<string, string> {
  if (env.LD_PRELOAD === undefined) return env;
  const { LD_PRELOAD, ...rest } = env;
  const found = preloaded({ LD_PRELOAD })
    .map((p) => library(basename(p)))
    .filter((p): p is string => p !== undefined);
  return found.length ? { ...rest, LD_PRELOAD: found.join(':') } : rest;
}
