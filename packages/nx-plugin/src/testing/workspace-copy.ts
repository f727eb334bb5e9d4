// A throwaway copy of this workspace to run generators in, as a user would in a fresh clone: the
// files git knows (committed or not, ignored ones left out) copied, and node_modules shared rather
// than reinstalled. The shared node_modules is a directory of links to the original's entries,
// except the workspace's own packages (@opkit/*), which link into the copy: what the copy builds
// and tests is its own source.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readlinkSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';

export function copyWorkspace(root: string, dest: string): void {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 2 ** 20 })
    .split('\0')
    .filter(Boolean);
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
    symlinkSync(readlinkSync(join(root, 'node_modules/@opkit', pkg)), join(modules, '@opkit', pkg));
  }
}

/**
 * The environment for nx and vitest run inside the copy: without the variables the nx task and
 * vitest worker running this test set (they would make the inner runs think they are this one).
 */
export function nestedEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(NX_|VITEST|TEST$|npm_)/.test(k)));
  return { ...env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', NX_TUI: 'false', NX_SKIP_NX_CACHE: 'false', FORCE_COLOR: '0', ...extra };
}
