import { workspaceRoot } from '@opkit/testing';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Builds a comparator under bench/compare/<dir> (a Go module of its own), once per Go source and
 * go.sum, into opkit's cache (like the control-plane binaries), with a progress line.
 */
export function buildGoComparator(dir: string, what: string): string {
  const src = join(workspaceRoot(), 'bench/compare', dir);
  const h = createHash('sha256');
  for (const f of readdirSync(src)
    .filter((f) => f.endsWith('.go') || f === 'go.sum')
    .sort())
    h.update(f).update(readFileSync(join(src, f)));
  const hash = h.digest('hex').slice(0, 12);
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
