#!/usr/bin/env node
// Copies the shared chart parts (charts/_common) into every operator chart: templates/_common.tpl
// and values.schema.json (the shared schema merged with the chart's values.schema.local.json).
//   node tools/charts/sync-common.mjs [--check] [chart…]
// With --check, lists stale files and exits 1 instead of writing.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const charts = join(root, 'charts');
const common = join(charts, '_common');

function merge(base, local) {
  const out = { ...base, ...local, properties: { ...base.properties } };
  for (const [k, v] of Object.entries(local.properties ?? {})) {
    out.properties[k] = base.properties?.[k]?.type === 'object' && v.type === 'object' ? merge(base.properties[k], v) : v;
  }
  const required = [...new Set([...(base.required ?? []), ...(local.required ?? [])])];
  if (required.length) out.required = required;
  return out;
}

export function commonFiles(chart) {
  const dir = join(charts, chart);
  const tpl = `{{/* Copied from charts/_common by tools/charts/sync-common.mjs. Edit it there, not here. */}}\n${readFileSync(join(common, 'templates/_common.tpl'), 'utf8')}`;
  const base = JSON.parse(readFileSync(join(common, 'values.schema.json'), 'utf8'));
  const localPath = join(dir, 'values.schema.local.json');
  const local = existsSync(localPath) ? JSON.parse(readFileSync(localPath, 'utf8')) : {};
  return {
    [join(dir, 'templates/_common.tpl')]: tpl,
    [join(dir, 'values.schema.json')]: `${JSON.stringify(merge(base, local), null, 2)}\n`,
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  const names = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  const all = readdirSync(charts).filter((c) => !c.startsWith('_') && existsSync(join(charts, c, 'Chart.yaml')));
  const stale = [];
  for (const chart of names.length ? names : all) {
    for (const [path, content] of Object.entries(commonFiles(chart))) {
      if (existsSync(path) && readFileSync(path, 'utf8') === content) continue;
      stale.push(path.replace(`${root}/`, ''));
      if (!check) writeFileSync(path, content);
    }
  }
  if (check && stale.length) {
    console.error(`stale shared chart files (run: node tools/charts/sync-common.mjs):\n  ${stale.join('\n  ')}`);
    process.exit(1);
  }
  if (stale.length) console.log(`${check ? 'stale' : 'wrote'}:\n  ${stale.join('\n  ')}`);
}
