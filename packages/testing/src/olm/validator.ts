import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheRoot } from '../assets/binaries.js';
import { withLock } from '../containers/lock.js';
import { runLong, say } from '../containers/progress.js';
import { which } from '../containers/which.js';
import { workspaceRoot } from '../e2e/workspace.js';
import { run } from '../run.js';

/**
 * operator-framework's bundle validators (github.com/operator-framework/api, the library that
 * `operator-sdk bundle validate` and `operator-verify` run), in tools/olm/go/bundle-validate:
 * built once per source version into opkit's cache, from the Go module proxy. (operator-sdk's own
 * module is not served there; its validators are, and this runs the same default set.)
 */
export async function bundleValidator(): Promise<string> {
  const src = join(workspaceRoot(), 'tools/olm/go/bundle-validate');
  const hash = createHash('sha256');
  for (const f of ['main.go', 'go.mod', 'go.sum']) hash.update(readFileSync(join(src, f)));
  const bin = join(cacheRoot(), 'olm', `bundle-validate-${hash.digest('hex').slice(0, 12)}`);
  if (existsSync(bin)) return bin;
  if (!which('go')) throw new Error('building the OLM bundle validator needs Go, which is not installed');
  return withLock(`${bin}.lock`, async () => {
    if (existsSync(bin)) return bin;
    say('building the OLM bundle validator (github.com/operator-framework/api) from its Go module, once (a few minutes)…');
    await runLong('go', ['build', '-trimpath', '-ldflags=-s -w', '-o', bin, '.'], {
      cwd: src,
      label: 'building bundle-validate',
      env: { ...process.env, GOTOOLCHAIN: 'local', CGO_ENABLED: '0', GOFLAGS: '-mod=mod' },
    });
    return bin;
  });
}

export interface BundleFinding {
  level: 'error' | 'warning';
  type: string;
  field?: string;
  message: string;
  object: string;
}

/** The validators' findings on a bundle directory (errors and warnings). */
export async function validateBundle(bundleDir: string): Promise<BundleFinding[]> {
  const r = await run(await bundleValidator(), [bundleDir], { check: false });
  if (r.code !== 0 && r.code !== 1) throw new Error(`bundle-validate could not read ${bundleDir}: ${r.stderr}`);
  return r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as BundleFinding);
}
