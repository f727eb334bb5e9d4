// A throwaway copy of this workspace to run generators in, as a user would in a fresh clone: the
// files git knows (committed or not, ignored ones left out) copied, and node_modules shared rather
// than reinstalled. The shared node_modules is a directory of links to the original's entries,
// except the workspace's own packages (@opkit/*), which link into the copy: what the copy builds
// and tests is its own source.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { operatorDirs, operatorNames } from '../names.js';
import { lockfileStep } from '../tasks.js';
import { dockerfileCopyLine, projectReference, readmeRowStart } from '../workspace.js';

/** The directories the operator generator makes for the operator `name`. */
const dirsOf = (name: string) => Object.values(operatorDirs(operatorNames(name)));

/**
 * Copies the workspace. `without` names operators to leave out, as they were before they were
 * generated (a user who followed the guide in this workspace has a `webapp` already, and the
 * guide's test must still start without one): their directories, their lines in the files the
 * generator edits, and their workspaces in package-lock.json.
 */
export function copyWorkspace(root: string, dest: string, { without = [] }: { without?: string[] } = {}): void {
  const omitted = without.flatMap(dirsOf);
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 2 ** 20 })
    .split('\0')
    .filter((f) => f && !omitted.some((d) => f.startsWith(`${d}/`)));
  for (const f of files) {
    mkdirSync(dirname(join(dest, f)), { recursive: true });
    try {
      copyFileSync(join(root, f), join(dest, f));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e; // deleted on disk, not yet in git
    }
  }
  const modules = join(dest, 'node_modules');
  mkdirSync(join(modules, '@opkit'), { recursive: true });
  for (const entry of readdirSync(join(root, 'node_modules'))) {
    if (entry === '@opkit' || entry === '.vite' || entry === '.cache') continue;
    symlinkSync(join(root, 'node_modules', entry), join(modules, entry));
  }
  for (const pkg of readdirSync(join(root, 'node_modules/@opkit'))) {
    const target = readlinkSync(join(root, 'node_modules/@opkit', pkg));
    if (existsSync(join(modules, '@opkit', target))) symlinkSync(target, join(modules, '@opkit', pkg));
  }
  const present = without.filter((n) => dirsOf(n).some((d) => existsSync(join(root, d))));
  if (present.length) forgetOperators(dest, present);
}

/** Takes generated operators out of the files the generator edited, and out of package-lock.json. */
function forgetOperators(ws: string, names: string[]): void {
  const dirs = names.flatMap(dirsOf);
  const keepLines = (file: string, keep: (line: string) => boolean) =>
    writeFileSync(join(ws, file), readFileSync(join(ws, file), 'utf8').split('\n').filter(keep).join('\n'));
  keepLines('apps/Dockerfile', (l) => !dirs.some((d) => l === dockerfileCopyLine(d)));
  keepLines('README.md', (l) => !names.some((n) => l.startsWith(readmeRowStart(n))));
  const tsconfig = JSON.parse(readFileSync(join(ws, 'tsconfig.json'), 'utf8')) as { references?: { path: string }[] };
  tsconfig.references = tsconfig.references?.filter((r) => !dirs.some((d) => r.path === projectReference(d)));
  writeFileSync(join(ws, 'tsconfig.json'), `${JSON.stringify(tsconfig, null, 2)}\n`);
  const [file, ...args] = lockfileStep.command;
  execFileSync(file, args, { cwd: ws, stdio: 'ignore' });
}

/**
 * The environment for nx and vitest run inside the copy: without the variables the nx task and
 * vitest worker running this test set (they would make the inner runs think they are this one).
 */
export function nestedEnv(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(NX_|VITEST|TEST$|npm_)/.test(k)));
  return { ...env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', NX_TUI: 'false', FORCE_COLOR: '0' };
}
