// `nx g @opkit/nx-plugin:operator <name>`: operator-sdk's `init` for this workspace. A new app on
// runOperator with its image, a chart on the shared library chart, an e2e project (local and kind),
// wired into the workspace so `npm test` lints, typechecks, tests and e2e-tests it from then on.
import { generateFiles, type GeneratorCallback, type Tree } from '@nx/devkit';
import { join } from 'node:path';
import pluginPackage from '../../../package.json' with { type: 'json' };
import { operatorDirs, operatorNames } from '../../names.js';
import { chartSteps, formatStep, lockfileStep, runSteps } from '../../tasks.js';
import { addDockerfileWorkspaces, addProjectReferences, addReadmeRow, workspaceScope } from '../../workspace.js';
import type { OperatorGeneratorSchema } from './schema.js';

export default function operatorGenerator(tree: Tree, options: OperatorGeneratorSchema): GeneratorCallback {
  const n = operatorNames(options.name, workspaceScope(tree));
  if (tree.exists(`apps/${n.app}`))
    throw new Error(`apps/${n.app} already exists: an operator is generated once (add kinds with nx g @opkit/nx-plugin:api ${n.name} --kind …)`);
  // Written into JSON, YAML and TypeScript strings: typographic quotes need no escaping in any of them.
  const description = (options.description ?? `Runs ${n.title.toLowerCase()} workloads on Kubernetes.`)
    .replace(/'/g, '’')
    .replace(/"/g, '”')
    .replace(/[\\\n]/g, ' ');
  // In opkit's own repository the apps build against the packages' source (TypeScript project
  // references); elsewhere against the published packages in node_modules.
  const sourcePackages = tree.exists('packages/runtime/package.json');
  const opkitRange = sourcePackages ? '*' : `^${pluginPackage.version}`;
  generateFiles(tree, join(import.meta.dirname, 'files'), '.', { ...n, description, sourcePackages, opkitRange, dot: '.', tmpl: '' });
  const dirs = operatorDirs(n);
  addDockerfileWorkspaces(tree, [dirs.app, dirs.e2e]);
  addProjectReferences(tree, [dirs.app, dirs.e2e]);
  addReadmeRow(tree, n.name, description);
  return () => {
    if (!options.skipTasks) runSteps(tree.root, [lockfileStep, ...chartSteps(n.app), formatStep([dirs.app, dirs.e2e])]);
    console.log(`
${n.project} is ready: ${dirs.app}, ${dirs.chart}, ${dirs.e2e}.
Next, its first API and controller:
  npx nx g @opkit/nx-plugin:api ${n.name} --group ${n.name}.example.com --api-version v1alpha1 --kind ${n.pascal}
Then: npx nx run-many -t lint typecheck test e2e -p ${n.project} ${n.e2eProject}`);
  };
}
