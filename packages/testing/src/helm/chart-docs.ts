import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { findBinary } from '../assets/binaries.js';
import { run } from '../run.js';

/**
 * A chart's README as helm-docs renders it from Chart.yaml and the `# --` comments of values.yaml,
 * through the template the opkit charts share (charts/opkit-lib/chart-readme.gotmpl).
 */
export async function renderChartReadme(chartDir: string): Promise<string> {
  const dir = resolve(chartDir);
  const template = resolve(dir, '../opkit-lib/chart-readme.gotmpl');
  const r = await run(
    findBinary('helm-docs'),
    ['--dry-run', '--chart-search-root', dir, '--template-files', template, '--sort-values-order', 'file', '--log-level', 'warning'],
    { cwd: dir },
  );
  return r.stdout;
}

/** Writes (or, with `check`, compares) the chart's README.md; returns whether it was up to date. */
export async function syncChartReadme(chartDir: string, mode: 'write' | 'check'): Promise<boolean> {
  const file = join(chartDir, 'README.md');
  const want = await renderChartReadme(chartDir);
  let have = '';
  try {
    have = readFileSync(file, 'utf8');
  } catch {
    /* missing: stale */
  }
  if (have === want) return true;
  if (mode === 'write') writeFileSync(file, want);
  return false;
}
