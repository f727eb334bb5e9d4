import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { workspaceRoot } from '../e2e/workspace.js';
import { syncChartReadme } from '../helm/chart-docs.js';
import { bundleFiles } from '../olm/files.js';
import { run } from '../run.js';

/** A commit as the changelog lists it. */
export interface Commit {
  hash: string;
  subject: string;
}

/**
 * Chart.yaml with `version` and `appVersion` set (the chart ships one app, versioned with it);
 * every other line, comments included, kept. Pure.
 */
export function setChartVersion(chartYaml: string, version: string): string {
  let seen = 0;
  const out = chartYaml.replace(/^(version|appVersion):.*$/gm, (_line, key: string) => {
    seen++;
    return key === 'version' ? `version: ${version}` : `appVersion: "${version}"`;
  });
  if (seen !== 2) throw new Error(`Chart.yaml: expected one top-level version and one appVersion line, found ${seen}`);
  return out;
}

/**
 * A changelog section from commit subjects. This repository's subjects read `area: what changed`
 * (not Conventional Commits, which nx's changelog expects), so commits are grouped by area, areas
 * in alphabetical order, commits oldest first within each. Pure.
 */
export function changelogSection(version: string, date: string, commits: Commit[]): string {
  const groups = new Map<string, string[]>();
  for (const c of [...commits].reverse()) {
    // The area is one word (`cert`, `runtime`, `e2e`, `README`); a longer lead-in is prose, not an area.
    const m = /^([a-z0-9][a-z0-9./-]*):\s+(.*)$/i.exec(c.subject);
    const area = m ? m[1]!.toLowerCase() : 'other';
    const text = m ? m[2]! : c.subject;
    groups.set(area, [...(groups.get(area) ?? []), `- ${text} (${c.hash.slice(0, 7)})`]);
  }
  const parts = [`## ${version} (${date})`, ''];
  if (!commits.length) parts.push('No changes.', '');
  for (const area of [...groups.keys()].sort()) parts.push(`### ${area}`, '', ...groups.get(area)!, '');
  return parts.join('\n');
}

/** CHANGELOG.md with a new section above the older ones (under the title). Pure. */
export function prependChangelog(existing: string, section: string): string {
  const title = '# Changelog\n\nEvery release of the opkit packages, images, charts and bundles (one version for all).\n';
  const rest = existing.startsWith('# Changelog') ? existing.slice(existing.indexOf('\n## ') + 1 || existing.length) : existing;
  return `${title}\n${section.trimEnd()}\n${rest.trim() ? `\n${rest.trimEnd()}\n` : ''}`;
}

/** Commits since the last `v*` tag (all of them before the first release), newest first. */
export function commitsSinceLastRelease(root: string): { since?: string; commits: Commit[] } {
  const tag = spawnSync('git', ['describe', '--tags', '--abbrev=0', '--match', 'v*'], { cwd: root, encoding: 'utf8' });
  const since = tag.status === 0 ? tag.stdout.trim() : undefined;
  const log = spawnSync('git', ['log', '--format=%H%x09%s', ...(since ? [`${since}..HEAD`] : [])], { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (log.status !== 0) throw new Error(`git log failed: ${log.stderr}`);
  const commits = log.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [hash, ...subject] = l.split('\t');
      return { hash: hash!, subject: subject.join('\t') };
    });
  return { since, commits };
}

/** The operators: apps with a chart (and an OLM bundle). */
export function operatorApps(root = workspaceRoot()): string[] {
  return ['memcached-operator', 'cdn-operator', 'cert-operator'].filter((a) => existsSync(join(root, 'charts', a, 'Chart.yaml')));
}

/** The version checked out: the release group's one version, as nx release wrote it. */
export function checkedOutVersion(root = workspaceRoot()): string {
  return (JSON.parse(readFileSync(join(root, 'packages/runtime/package.json'), 'utf8')) as { version: string }).version;
}

export interface VersionResult {
  version: string;
  changed: string[];
}

/**
 * The versioning phase of a release: `nx release version <specifier>` (every package and app of
 * the release group in nx.json, one version, the lock file updated), then what nx knows nothing
 * of: each chart's version and appVersion, its README, the OLM bundles (their CSV carries the
 * version), and a CHANGELOG.md section. Nothing is committed or tagged: the maintainer reviews.
 */
export async function versionRelease(options: { specifier: string; dryRun?: boolean; date?: string; root?: string }): Promise<VersionResult> {
  const root = options.root ?? workspaceRoot();
  await run(join(root, 'node_modules/.bin/nx'), ['release', 'version', options.specifier, ...(options.dryRun ? ['--dry-run'] : [])], { cwd: root });
  if (options.dryRun) return { version: options.specifier, changed: [] };
  const version = checkedOutVersion(root);
  const changed: string[] = [];
  const write = (path: string, content: string) => {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
    changed.push(path.slice(root.length + 1));
  };
  for (const app of operatorApps(root)) {
    const chartYaml = join(root, 'charts', app, 'Chart.yaml');
    write(chartYaml, setChartVersion(readFileSync(chartYaml, 'utf8'), version));
    if (!(await syncChartReadme(join(root, 'charts', app), 'write'))) changed.push(`charts/${app}/README.md`);
    for (const [path, content] of Object.entries(await bundleFiles(app, root))) {
      if (!existsSync(path) || readFileSync(path, 'utf8') !== content) write(path, content);
    }
  }
  const changelog = join(root, 'CHANGELOG.md');
  const { commits } = commitsSinceLastRelease(root);
  const date = options.date ?? new Date().toISOString().slice(0, 10);
  write(changelog, prependChangelog(existsSync(changelog) ? readFileSync(changelog, 'utf8') : '', changelogSection(version, date, commits)));
  return { version, changed };
}
