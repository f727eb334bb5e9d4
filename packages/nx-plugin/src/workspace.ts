// Edits to files the whole workspace shares, made when an operator joins it: the image recipe's
// list of workspaces, the TypeScript project references, the README's table of operators.
import type { Tree } from '@nx/devkit';

/**
 * The npm scope the workspace names its projects in, as nx does: the root package's (`@opkit/source`
 * gives opkit), or its name when it has none (create-nx-workspace's `acme` gives acme).
 */
export function workspaceScope(tree: Tree): string {
  const name = (JSON.parse(tree.read('package.json', 'utf8') ?? '{}') as { name?: string }).name ?? '';
  const scope = name.startsWith('@') ? name.slice(1).split('/')[0]! : name;
  return /^[a-z0-9][a-z0-9._-]*$/.test(scope) ? scope : 'opkit';
}

/** A workspace's line in apps/Dockerfile's deps stage. */
export const dockerfileCopyLine = (dir: string) => `COPY ${dir}/package.json ${dir}/`;

/**
 * apps/Dockerfile copies every workspace's package.json before `npm ci` (a test keeps that list
 * equal to the npm workspaces): a new app and its e2e project go into it, in the file's order
 * (packages, apps, e2e; by name within each).
 */
export function addDockerfileWorkspaces(tree: Tree, dirs: string[]): void {
  const path = 'apps/Dockerfile';
  const text = tree.read(path, 'utf8');
  if (text === null) return;
  const lines = text.split('\n');
  const isCopy = (l: string) => /^COPY (\S+)\/package\.json \1\/$/.test(l);
  let first = lines.findIndex(isCopy);
  if (first < 0) {
    // A new workspace's first project: its line goes just after the root manifests'.
    const manifests = lines.findIndex((l) => /^COPY package\.json package-lock\.json /.test(l));
    if (manifests < 0) throw new Error(`${path}: no "COPY package.json package-lock.json ./" line to add ${dirs.join(', ')} after`);
    first = manifests + 1;
    lines.splice(first, 0, dockerfileCopyLine(dirs[0]!));
  }
  let end = first;
  while (end < lines.length && isCopy(lines[end]!)) end++;
  const group = (l: string) => ['packages/', 'apps/', 'e2e/'].findIndex((p) => l.startsWith(`COPY ${p}`));
  const block = [...new Set([...lines.slice(first, end), ...dirs.map(dockerfileCopyLine)])].sort((a, b) => group(a) - group(b) || a.localeCompare(b));
  lines.splice(first, end - first, ...block);
  tree.write(path, lines.join('\n'));
}

/** A project's entry in the root tsconfig.json's references. */
export const projectReference = (dir: string) => `./${dir}`;

/** The root tsconfig.json references every project (what `nx sync` keeps): the new ones too. */
export function addProjectReferences(tree: Tree, dirs: string[]): void {
  const path = 'tsconfig.json';
  const text = tree.read(path, 'utf8');
  if (text === null) return;
  const config = JSON.parse(text) as { references?: { path: string }[] };
  const refs = config.references ?? [];
  for (const d of dirs) if (!refs.some((r) => r.path === projectReference(d))) refs.push({ path: projectReference(d) });
  config.references = refs;
  tree.write(path, `${JSON.stringify(config, null, 2)}\n`);
}

const TABLE_HEADER = '| operator | resources | what it does |';

/** How an operator's row in the README's table starts. */
export const readmeRowStart = (name: string) => `| ${name} |`;

/** A row in the README's table of operators; its resources cell grows as `api` adds kinds. */
export function addReadmeRow(tree: Tree, name: string, description: string): void {
  const text = tree.read('README.md', 'utf8');
  if (text === null) return;
  const lines = text.split('\n');
  const header = lines.indexOf(TABLE_HEADER);
  if (header < 0 || lines.some((l) => l.startsWith(readmeRowStart(name)))) return;
  let end = header + 2;
  while (end < lines.length && lines[end]!.startsWith('|')) end++;
  lines.splice(end, 0, `${readmeRowStart(name)} (none yet: \`nx g @opkit/nx-plugin:api ${name} --kind …\`) | ${description} |`);
  tree.write('README.md', lines.join('\n'));
}

/** Names a new kind in the operator's README row. */
export function addReadmeResource(tree: Tree, name: string, resource: string): void {
  const text = tree.read('README.md', 'utf8');
  if (text === null) return;
  const lines = text.split('\n');
  const at = lines.findIndex((l) => l.startsWith(readmeRowStart(name)));
  if (at < 0) return;
  const cells = lines[at]!.split(' | ');
  const listed = cells[1] ?? '';
  const current = listed.startsWith('(none yet') ? [] : listed.split(', ');
  if (!current.includes(resource)) cells[1] = [...current, resource].join(', ');
  lines[at] = cells.join(' | ');
  tree.write('README.md', lines.join('\n'));
}
