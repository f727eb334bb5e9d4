// `npx create-nx-workspace <name> --preset=@opkit/nx-plugin`: a workspace from nothing, as
// `kubebuilder init` makes one. The workspace's shared setup comes from opkit's own repository
// (./template.ts), then the operator generator adds the first operator; then npm installs and the
// operator's chart files are rendered from its code, so everything passes as generated.
import { type GeneratorCallback, type Tree } from '@nx/devkit';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import pluginPackage from '../../../package.json' with { type: 'json' };
import { operatorDirs, operatorNames } from '../../names.js';
import { workspaceScope } from '../../workspace.js';
import { chartSteps, formatStep, runSteps } from '../../tasks.js';
import operatorGenerator from '../operator/generator.js';
import type { PresetGeneratorSchema } from './schema.js';
import { ADAPTED_FILES, adapt, COPIED_DIRS, COPIED_FILES, shippedPath, unshippedPath, workspaceReadme, workspaceTsconfig } from './template.js';

/** Where opkit's shared files are read from: the published plugin's copy, else this repository. */
export function templateRoot(here = import.meta.dirname): { dir: string; shipped: boolean } {
  const shipped = join(here, '../../workspace');
  return existsSync(shipped) ? { dir: shipped, shipped: true } : { dir: join(here, '../../../../..'), shipped: false };
}

const filesUnder = (dir: string): string[] =>
  readdirSync(dir).flatMap((e) => (statSync(join(dir, e)).isDirectory() ? filesUnder(join(dir, e)) : [join(dir, e)]));

/** Writes the shared files of a new workspace into `tree`, read from `from` (see templateRoot). */
export function writeWorkspaceFiles(tree: Tree, from: { dir: string; shipped: boolean }, name: string): void {
  const ctx = { name, opkitVersion: pluginPackage.version };
  const source = (f: string) => join(from.dir, from.shipped ? shippedPath(f) : f);
  for (const f of COPIED_FILES) tree.write(f, readFileSync(source(f)));
  for (const d of COPIED_DIRS) for (const f of filesUnder(source(d))) tree.write(unshippedPath(relative(from.dir, f)), readFileSync(f));
  for (const f of ADAPTED_FILES) tree.write(f, adapt(f, readFileSync(source(f), 'utf8'), ctx));
  tree.write('README.md', workspaceReadme(name));
  tree.write('tsconfig.json', workspaceTsconfig);
  // create-nx-workspace's empty libs/ folder: opkit's layout keeps libraries under packages/.
  if (tree.children('libs').every((f) => f === '.gitkeep')) tree.delete('libs');
}

export default function presetGenerator(tree: Tree, options: PresetGeneratorSchema): GeneratorCallback {
  const operator = options.operator ?? options.name;
  writeWorkspaceFiles(tree, templateRoot(), options.name);
  operatorGenerator(tree, { name: operator, description: options.description, skipTasks: true });
  const n = operatorNames(operator, workspaceScope(tree));
  const dirs = operatorDirs(n);
  return () => {
    if (options.skipInstall) return;
    runSteps(tree.root, [
      { what: 'dependencies', command: ['npm', 'install', '--no-audit', '--no-fund', '--loglevel=error'] },
      ...chartSteps(n.app),
      formatStep([dirs.app, dirs.e2e]),
    ]);
    console.log(`
${options.name} is ready, with ${dirs.app}, ${dirs.chart} and ${dirs.e2e}.
Next, the toolset the tests run (built from Go modules once), then the operator's first API:
  npm run setup:binaries
  npx nx g @opkit/nx-plugin:api ${n.name} --group ${n.name}.example.com --api-version v1alpha1 --kind ${n.pascal}
Then: npm test`);
  };
}
