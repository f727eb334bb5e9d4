import { join } from 'node:path';
import { goProgram } from '../containers/go-tools.js';
import { toolingDir } from '../e2e/workspace.js';
import { run } from '../run.js';

/**
 * operator-framework's bundle validators (github.com/operator-framework/api, the library that
 * `operator-sdk bundle validate` and `operator-verify` run), in tools/olm/go/bundle-validate:
 * built once per source version into opkit's cache, from the Go module proxy. (operator-sdk's own
 * module is not served there; its validators are, and this runs the same default set.)
 */
export const bundleValidator = (): Promise<string> =>
  goProgram(join(toolingDir('olm'), 'go/bundle-validate'), 'olm', ' (github.com/operator-framework/api, from its Go module, once: a few minutes)');

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
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as BundleFinding);
}
