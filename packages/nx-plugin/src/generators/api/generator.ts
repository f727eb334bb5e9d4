// `nx g @opkit/nx-plugin:api <operator> --kind K [--group --api-version --namespaced --scale]`:
// operator-sdk's `create api`. The TypeBox API in src/api/<version>/, a controller in
// src/controllers/<kind>/ with its RBAC rules, unit and integration tests, a sample in examples/,
// and the CRD and roles rendered into the chart.
import { generateFiles, type GeneratorCallback, type Tree } from '@nx/devkit';
import { join } from 'node:path';
import { parseDocument, type YAMLMap } from 'yaml';
import { checkGroup, checkVersion, kindNames, operatorNames } from '../../names.js';
import { addToList } from '../../scaffold.js';
import { chartSteps, formatStep, runSteps } from '../../tasks.js';
import { addReadmeResource, workspaceScope } from '../../workspace.js';
import type { ApiGeneratorSchema } from './schema.js';

/** The versions a kind already has in an app: src/api/<version>/<kind>.ts. */
export function versionsOf(tree: Tree, app: string, lower: string): string[] {
  const api = `apps/${app}/src/api`;
  return tree.children(api).filter((v) => tree.exists(`${api}/${v}/${lower}.ts`));
}

export default function apiGenerator(tree: Tree, options: ApiGeneratorSchema): GeneratorCallback {
  const n = operatorNames(options.operator, workspaceScope(tree));
  const src = `apps/${n.app}/src`;
  if (!tree.exists(`${src}/api/index.ts`))
    throw new Error(`no operator ${n.name} (apps/${n.app}/src/api/index.ts): generate it first with nx g @opkit/nx-plugin:operator ${n.name}`);
  const k = kindNames(options.kind, options.plural);
  // nx keeps --version for itself, so the version comes as --api-version: v1, or group/v1.
  const [givenGroup, givenVersion] = (options.apiVersion ?? 'v1alpha1').includes('/')
    ? (options.apiVersion ?? '').split('/')
    : [options.group, options.apiVersion ?? 'v1alpha1'];
  if (options.group && givenGroup !== options.group) throw new Error(`--group ${options.group} and --api-version ${options.apiVersion} name different groups`);
  const group = checkGroup(givenGroup ?? `${n.name}.example.com`);
  const version = checkVersion(givenVersion);
  const namespaced = options.namespaced ?? true;
  const scale = options.scale ?? false;
  const existing = versionsOf(tree, n.app, k.lower);
  if (existing.includes(version)) throw new Error(`${src}/api/${version}/${k.lower}.ts already exists`);
  const vars = { ...n, ...k, operatorName: n.name, group, version, namespaced, scale, tmpl: '' };

  generateFiles(tree, join(import.meta.dirname, 'files/api'), `${src}/api/${version}`, vars);
  if (existing.length) {
    // One more version of a kind that has a controller: the versions are tied together by a
    // conversion webhook, which is its own step.
    return () =>
      console.log(`
${k.kind} ${version} is in ${src}/api/${version}/${k.lower}.ts, next to ${existing.join(', ')}. To serve the versions together
(one stored, the others converted by the operator), run:
  npx nx g @opkit/nx-plugin:webhook ${n.name} --kind ${k.kind} --conversion`);
  }
  generateFiles(tree, join(import.meta.dirname, 'files/controller'), `${src}/controllers/${k.lower}`, vars);
  generateFiles(tree, join(import.meta.dirname, 'files/example'), `apps/${n.app}/examples`, vars);

  addToList(tree, `${src}/api/index.ts`, 'resources', k.kind, `./${version}/${k.lower}.js`);
  addToList(tree, `${src}/controllers/index.ts`, 'controllers', `${k.camel}Controller`, `./${k.lower}/controller.js`);
  addOlmKind(tree, `apps/${n.app}/olm.yaml`, k.kind, n.name);
  addReadmeResource(tree, n.name, `\`${k.kind}\` (\`${group}/${version}\`)`);

  return () => {
    if (!options.skipTasks) runSteps(tree.root, [...chartSteps(n.app), formatStep([`apps/${n.app}`])]);
    console.log(`
${k.kind} (${group}/${version}) is served by ${n.project}:
  ${src}/api/${version}/${k.lower}.ts          the spec and status (TypeBox): add fields, then nx run ${n.project}:generate
  ${src}/controllers/${k.lower}/controller.ts  the reconcile
  apps/${n.app}/examples/${k.lower}.yaml        the sample the e2e suite runs`);
  };
}

/** The OLM bundle names each kind the operator owns (displayName, description): a first entry to edit. */
function addOlmKind(tree: Tree, path: string, kind: string, operator: string): void {
  const text = tree.read(path, 'utf8');
  if (text === null) return;
  const doc = parseDocument(text);
  if (doc.hasIn(['kinds', kind])) return;
  if (!doc.has('kinds')) doc.set('kinds', doc.createNode({}));
  const kinds = doc.get('kinds') as YAMLMap;
  kinds.flow = false;
  kinds.set(kind, doc.createNode({ displayName: kind.replace(/([a-z0-9])([A-Z])/g, '$1 $2'), description: `A ${kind}, run by the ${operator} operator.` }));
  tree.write(path, doc.toString({ lineWidth: 0, flowCollectionPadding: false }));
}
