import { workspaceRoot } from '@opkit/testing';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Builds a comparator under bench/compare/<dir> (a Go module of its own), once per source and
 * go.sum, into opkit's cache (like the control-plane binaries), with a progress line.
 */
export function buildGoComparator(dir: string, what: string): string {
  const src = join(workspaceRoot(), 'bench/compare', dir);
  const hash = createHash('sha256')
    .update(readFileSync(join(src, 'main.go')))
    .update(readFileSync(join(src, 'go.sum')))
    .digest('hex')
    .slice(0, 12);
  const bin = join(process.env.OPKIT_CACHE_DIR ?? join(homedir(), '.cache/opkit'), 'bench', `${dir}-${hash}`);
  if (existsSync(bin)) return bin;
  mkdirSync(join(bin, '..'), { recursive: true });
  console.log(`building ${what} from its Go module, once (a few minutes on 2 cores)…`);
  const t0 = Date.now();
  const r = spawnSync('go', ['build', '-trimpath', '-o', bin, '.'], {
    cwd: src,
    stdio: 'inherit',
    env: { ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local', CGO_ENABLED: '0' },
  });
  if (r.status !== 0) throw new Error(`go build of ${what} failed`);
  console.log(`built in ${Math.round((Date.now() - t0) / 1000)} s`);
  return bin;
}
