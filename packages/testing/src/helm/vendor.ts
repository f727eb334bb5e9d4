import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import { findBinary } from '../assets/binaries.js';
import { run } from '../run.js';

interface Dependency {
  name: string;
  version: string;
  repository?: string;
}

/** Newest modification time under a directory (the library's sources). */
function newestMtime(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/**
 * What `helm dependency build` does for a chart's `file://` dependencies (the opkit-lib library
 * chart), made safe for parallel test runs: each library is packaged into a temporary directory and
 * renamed into the chart's `charts/` (rename is atomic: a concurrent `helm template` sees the old
 * archive or the new, never half of one), and only when its sources are newer than the archive.
 */
export async function vendorChartDependencies(chartDir: string): Promise<void> {
  const chart = parse(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8')) as { dependencies?: Dependency[] };
  for (const dep of chart.dependencies ?? []) {
    if (!dep.repository?.startsWith('file://')) throw new Error(`${chartDir}: dependency ${dep.name} is not file://: vendor it with helm dependency build`);
    const source = resolve(chartDir, dep.repository.slice('file://'.length));
    const target = join(chartDir, 'charts', `${dep.name}-${dep.version}.tgz`);
    if (existsSync(target) && statSync(target).mtimeMs >= newestMtime(source)) continue;
    mkdirSync(join(chartDir, 'charts'), { recursive: true });
    // Beside the chart, not under /tmp: a rename stays on one filesystem.
    const tmp = mkdtempSync(join(chartDir, '..', '.vendor-'));
    try {
      await run(findBinary('helm'), ['package', source, '--destination', tmp]);
      renameSync(join(tmp, `${dep.name}-${dep.version}.tgz`), target);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
}
