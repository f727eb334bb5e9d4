import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { findBinary } from '../assets/binaries.js';
import { run } from '../run.js';
import { vendorChartDependencies } from './vendor.js';
import type { RenderedObject } from './verify-chart.js';

/**
 * What a platform team's parent (umbrella) chart renders with these charts as dependencies: a
 * throwaway parent chart naming each by `file://`, `helm dependency build`, then `helm lint
 * --strict` and `helm template` with the given values (subcharts' values under their names, and
 * `global`, which Helm hands to every subchart).
 */
export async function helmTemplateUmbrella(
  charts: string[],
  values: Record<string, unknown>,
  opts: { release?: string; namespace?: string } = {},
): Promise<RenderedObject[]> {
  const dir = mkdtempSync(join(tmpdir(), 'opkit-umbrella-'));
  const env = { ...process.env, HELM_CACHE_HOME: join(dir, '.cache'), HELM_CONFIG_HOME: join(dir, '.config'), HELM_DATA_HOME: join(dir, '.data') };
  try {
    for (const c of charts) await vendorChartDependencies(c);
    const parent = join(dir, 'platform');
    mkdirSync(join(parent, 'templates'), { recursive: true });
    writeFileSync(
      join(parent, 'Chart.yaml'),
      stringify({
        apiVersion: 'v2',
        name: 'platform',
        version: '1.0.0',
        dependencies: charts.map((c) => ({ name: basename(c), version: '>=0.0.0-0', repository: `file://${resolve(c)}` })),
      }),
    );
    writeFileSync(join(parent, 'values.yaml'), stringify(values));
    const helm = findBinary('helm');
    await run(helm, ['dependency', 'build', parent], { env });
    await run(helm, ['lint', '--strict', parent], { env });
    const out = await run(helm, ['template', opts.release ?? 'platform', parent, '--namespace', opts.namespace ?? 'platform'], { env });
    return parseAllDocuments(out.stdout)
      .map((d) => d.toJSON() as RenderedObject | null)
      .filter((o): o is RenderedObject => !!o && !!o.kind);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
