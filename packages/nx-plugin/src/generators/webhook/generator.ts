// `nx g @opkit/nx-plugin:webhook <operator> --kind K [--validating] [--mutating] [--conversion]`:
// operator-sdk's `create webhook`. Each webhook is a pure function (table-tested) wrapped by the
// runtime, an integration test in which a real API server calls it, and the chart's webhooks.yaml,
// Service and certificate wiring generated from the operator's lists of webhooks.
import { generateFiles, type GeneratorCallback, type Tree } from '@nx/devkit';
import { join } from 'node:path';
import { compareVersions, kindNames, operatorNames, type KindNames, type OperatorNames } from '../../names.js';
import { addToList } from '../../scaffold.js';
import { chartSteps, formatStep, runSteps } from '../../tasks.js';
import { workspaceScope } from '../../workspace.js';
import { versionsOf } from '../api/generator.js';
import type { WebhookGeneratorSchema } from './schema.js';

interface KindFacts {
  group: string;
  namespaced: boolean;
  scale: boolean;
}

/** What the api generator wrote into a kind's API file, read back rather than asked again. */
function kindFacts(tree: Tree, path: string): KindFacts {
  const text = tree.read(path, 'utf8') ?? '';
  const group = /group: '([^']+)'/.exec(text)?.[1];
  if (!group) throw new Error(`${path}: no "group: '…'" found in its defineCustomResource`);
  return { group, namespaced: !/scope: 'Cluster'/.test(text), scale: /\bscale: \{/.test(text) };
}

export default function webhookGenerator(tree: Tree, options: WebhookGeneratorSchema): GeneratorCallback {
  const n = operatorNames(options.operator, workspaceScope(tree));
  const k = kindNames(options.kind);
  const src = `apps/${n.app}/src`;
  if (!options.validating && !options.mutating && !options.conversion) throw new Error('say which webhooks: --validating, --mutating and/or --conversion');
  const versions = versionsOf(tree, n.app, k.lower).sort(compareVersions);
  if (!versions.length)
    throw new Error(`${k.kind} has no API in ${src}/api/<version>/${k.lower}.ts: generate it first with nx g @opkit/nx-plugin:api ${n.name} --kind ${k.kind}`);
  const converted = options.conversion || tree.exists(`${src}/api/${k.lower}-versions.ts`);
  // Admission webhooks are written for one version (the API server converts requests to it): the
  // stored one once versions are converted, else the one the operator serves.
  const servedAlone = new RegExp(`import \\{ ${k.kind} \\} from './(v\\w+)/${k.lower}\\.js';`).exec(tree.read(`${src}/api/index.ts`, 'utf8') ?? '')?.[1];
  const version = converted ? versions[versions.length - 1] : (servedAlone ?? versions[versions.length - 1]);
  const vars = { ...n, ...k, ...kindFacts(tree, `${src}/api/${version}/${k.lower}.ts`), version, tmpl: '' };

  if (options.conversion) addConversion(tree, n, k, versions, vars);
  if (options.validating) {
    generateFiles(tree, join(import.meta.dirname, 'files/validating'), `${src}/webhooks`, vars);
    addToList(tree, `${src}/webhooks/index.ts`, 'admission', `${k.camel}Validation`, `./${k.lower}-validation.js`);
  }
  if (options.mutating) {
    generateFiles(tree, join(import.meta.dirname, 'files/mutating'), `${src}/webhooks`, vars);
    addToList(tree, `${src}/webhooks/index.ts`, 'admission', `${k.camel}Defaults`, `./${k.lower}-defaults.js`);
  }
  serveWebhooksFromChart(tree, `charts/${n.app}/templates`);
  return () => {
    if (!options.skipTasks) runSteps(tree.root, [...chartSteps(n.app), formatStep([`apps/${n.app}`])]);
    console.log(`
${[options.validating && 'validating', options.mutating && 'mutating', options.conversion && 'conversion'].filter(Boolean).join(', ')} webhooks for ${k.kind} are in ${src}/${options.conversion ? `api/${k.lower}-versions.ts and ` : ''}webhooks/.
The chart now serves them (templates/webhooks.yaml: their Service, configurations and certificate Secret).`);
  };
}

/** Ties a kind's versions together: the newest is stored, the others converted through it. */
function addConversion(tree: Tree, n: OperatorNames, k: KindNames, versions: string[], vars: Record<string, unknown>): void {
  const src = `apps/${n.app}/src`;
  if (versions.length < 2) {
    throw new Error(
      `${k.kind} has one version (${versions[0]}): conversion needs two. Add one first: nx g @opkit/nx-plugin:api ${n.name} --kind ${k.kind} --api-version <v1beta1, v1…>`,
    );
  }
  if (tree.exists(`${src}/api/${k.lower}-versions.ts`))
    throw new Error(`${src}/api/${k.lower}-versions.ts already ties ${k.kind}'s versions together: add a new version to it by hand`);
  const alias = (v: string) => `${k.kind}${v.charAt(0).toUpperCase()}${v.slice(1)}`;
  const hub = versions[versions.length - 1]!; // two or more, checked above
  const spokes = versions.slice(0, -1).map((version) => ({ version, alias: alias(version) }));
  generateFiles(tree, join(import.meta.dirname, 'files/conversion-api'), `${src}/api`, { ...vars, hub: { version: hub, alias: alias(hub) }, spokes });
  generateFiles(tree, join(import.meta.dirname, 'files/conversion-test'), `${src}/webhooks`, { ...vars, hub: { version: hub, alias: alias(hub) }, spokes });

  // RESOURCES served the kind's first version alone: it now serves them all.
  const index = `${src}/api/index.ts`;
  const text = tree.read(index, 'utf8') ?? '';
  const single = new RegExp(`^import \\{ ${k.kind} \\} from '\\./v\\w+/${k.lower}\\.js';\\n`, 'm');
  const entry = new RegExp(`^\\s*${k.kind},\\n`, 'm');
  if (!single.test(text) || !entry.test(text)) {
    throw new Error(
      `${index}: cannot find "import { ${k.kind} } from './<version>/${k.lower}.js';" and "${k.kind}," to replace with ${k.kind}API (from ./${k.lower}-versions.js); edit it by hand and list ${k.kind}API in RESOURCES`,
    );
  }
  // Removed from the list, then listed again through the generated import.
  tree.write(index, text.replace(single, '').replace(entry, ''));
  addToList(tree, index, 'resources', `${k.kind}API`, `./${k.lower}-versions.js`);
  addToList(tree, `${src}/webhooks/index.ts`, 'conversions', `${k.kind}API`, `../api/${k.lower}-versions.js`);
}

/** The chart's Deployment opens the webhook port and mounts nothing more; its NetworkPolicy lets the API server in. */
function serveWebhooksFromChart(tree: Tree, templates: string): void {
  for (const file of ['deployment.yaml', 'networkpolicy.yaml']) {
    const path = `${templates}/${file}`;
    const text = tree.read(path, 'utf8');
    if (text === null || text.includes('"webhooks" true')) continue;
    const next = text.replace(/(include "opkit-lib\.v1\.(?:deployment|networkPolicy)" \(dict [^)]*)\)/, '$1 "webhooks" true)');
    if (next === text) throw new Error(`${path}: no include of opkit-lib.v1.deployment or .networkPolicy found to add "webhooks" true to`);
    tree.write(path, next);
  }
}
