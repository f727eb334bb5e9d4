import type { Tree } from '@nx/devkit';
import { createTree } from '@nx/devkit/testing.js';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { parse } from 'yaml';
import apiGenerator from './api/generator.js';
import operatorGenerator from './operator/generator.js';
import webhookGenerator from './webhook/generator.js';

// What the generators read and write, in memory, from the shapes of the workspace's shared files
// (the workspace test, generators.int.test.ts, generates into a copy of the real ones and runs
// what they generate).
function workspaceTree(): Tree {
  const tree = createTree();
  tree.write(
    'apps/Dockerfile',
    [
      'FROM node AS deps',
      'COPY package.json package-lock.json ./',
      'COPY packages/runtime/package.json packages/runtime/',
      'COPY apps/memcached-operator/package.json apps/memcached-operator/',
      'COPY e2e/memcached-operator-e2e/package.json e2e/memcached-operator-e2e/',
      'RUN npm ci',
      '',
    ].join('\n'),
  );
  tree.write(
    'README.md',
    ['# opkit', '', '| operator | resources | what it does |', '| --- | --- | --- |', '| memcached | `Memcached` | the classic |', ''].join('\n'),
  );
  tree.write('tsconfig.json', JSON.stringify({ files: [], references: [{ path: './packages/runtime' }, { path: './apps/memcached-operator' }] }));
  return tree;
}
const changed = (tree: Tree) =>
  tree
    .listChanges()
    .map((c) => `${c.type} ${c.path}`)
    .sort();
const text = (tree: Tree, path: string) => tree.read(path, 'utf8') ?? '';

describe('the operator generator', () => {
  beforeEach(() => {
    vi.spyOn(console, 'log').mockImplementation(() => undefined);
  });

  it('writes an app, its chart and its e2e project, and joins them to the workspace', () => {
    const tree = workspaceTree();
    operatorGenerator(tree, { name: 'webapp', skipTasks: true });
    const files = changed(tree);
    expect(files.filter((f) => f.startsWith('CREATE apps/webapp-operator/'))).toEqual(
      expect.arrayContaining([
        'CREATE apps/webapp-operator/package.json',
        'CREATE apps/webapp-operator/src/main.ts',
        'CREATE apps/webapp-operator/src/operator.ts',
        'CREATE apps/webapp-operator/src/manifests/generate.ts',
        'CREATE apps/webapp-operator/src/chart/chart.int.test.ts',
        'CREATE apps/webapp-operator/olm.yaml',
      ]),
    );
    expect(files).toEqual(
      expect.arrayContaining([
        'CREATE charts/webapp-operator/Chart.yaml',
        'CREATE charts/webapp-operator/.helmignore',
        'CREATE e2e/webapp-operator-e2e/src/webapp.e2e.ts',
      ]),
    );
    expect(JSON.parse(text(tree, 'tsconfig.json')).references).toEqual(
      expect.arrayContaining([{ path: './apps/webapp-operator' }, { path: './e2e/webapp-operator-e2e' }]),
    );
    expect(text(tree, 'README.md')).toContain('| webapp | (none yet');
    // Every nx target the README's test command runs, and the ones an operator ships with.
    const pkg = JSON.parse(text(tree, 'apps/webapp-operator/package.json')) as { name: string; nx: { targets: Record<string, unknown> } };
    expect(pkg.name).toBe('@opkit/webapp-operator');
    expect(Object.keys(pkg.nx.targets).sort()).toEqual(['build', 'bundle', 'bundle-image', 'chart-docs', 'docker-build', 'generate']);
    expect(text(tree, 'apps/webapp-operator/src/main.ts')).toContain("name: 'webapp-operator'");
    expect(text(tree, 'apps/Dockerfile')).toContain('COPY apps/webapp-operator/package.json apps/webapp-operator/\n');
    expect(parse(text(tree, 'charts/webapp-operator/Chart.yaml'))).toMatchObject({
      name: 'webapp-operator',
      dependencies: [{ name: 'opkit-lib', repository: 'file://../opkit-lib' }],
    });
    // Nothing is left templated.
    expect(
      tree
        .listChanges()
        .filter((c) => /<%|__\w+__|__tmpl__/.test(c.path + (c.content?.toString() ?? '')))
        .map((c) => c.path),
    ).toEqual([]);
  });

  it('writes a description into JSON, YAML and TypeScript without breaking any of them', () => {
    const tree = workspaceTree();
    operatorGenerator(tree, { name: 'shop', description: 'Runs a "shop": the store\'s stock \\ keeper', skipTasks: true });
    const description = 'Runs a ”shop”: the store’s stock   keeper';
    expect(JSON.parse(text(tree, 'apps/shop-operator/package.json')).description).toBe(description);
    expect(parse(text(tree, 'charts/shop-operator/Chart.yaml')).description).toBe(description);
    expect(text(tree, 'apps/shop-operator/src/main.ts')).toContain(`description: '${description}'`);
  });

  it('refuses an operator that exists, and a name that cannot name Kubernetes objects', () => {
    const tree = workspaceTree();
    tree.write('apps/memcached-operator/package.json', '{}');
    expect(() => operatorGenerator(tree, { name: 'memcached' })).toThrow(/apps\/memcached-operator already exists/);
    expect(() => operatorGenerator(tree, { name: 'Web_App' })).toThrow(/not an operator name/);
  });
});

describe('the api generator', () => {
  let tree: Tree;
  beforeEach(() => {
    vi.spyOn(console, 'log').mockImplementation(() => undefined);
    tree = workspaceTree();
    operatorGenerator(tree, { name: 'webapp', skipTasks: true });
  });

  it('adds the API, a controller with its tests, a sample, and lists them where the operator and its chart find them', () => {
    apiGenerator(tree, { operator: 'webapp', kind: 'WebApp', group: 'apps.opkit.dev', skipTasks: true });
    const src = 'apps/webapp-operator/src';
    for (const f of [
      'api/v1alpha1/webapp.ts',
      'controllers/webapp/controller.ts',
      'controllers/webapp/rbac.ts',
      'controllers/webapp/status.ts',
      'controllers/webapp/status.test.ts',
      'controllers/webapp/webapp.int.test.ts',
    ]) {
      expect(tree.exists(`${src}/${f}`), f).toBe(true);
    }
    expect(parse(text(tree, 'apps/webapp-operator/examples/webapp.yaml'))).toEqual({
      apiVersion: 'apps.opkit.dev/v1alpha1',
      kind: 'WebApp',
      metadata: { name: 'webapp-sample' },
      spec: {},
    });
    expect(text(tree, `${src}/api/index.ts`)).toMatch(
      /import \{ WebApp \} from '\.\/v1alpha1\/webapp\.js';[\s\S]*\n {2}WebApp,\n {2}\/\/ \+opkit:scaffold:resources/,
    );
    expect(text(tree, `${src}/controllers/index.ts`)).toMatch(/\n {2}webAppController,\n {2}\/\/ \+opkit:scaffold:controllers/);
    expect(parse(text(tree, 'apps/webapp-operator/olm.yaml')).kinds).toEqual({
      WebApp: { displayName: 'Web App', description: 'A WebApp, run by the webapp operator.' },
    });
    expect(text(tree, 'README.md')).toContain('| webapp | `WebApp` (`apps.opkit.dev/v1alpha1`) |');
  });

  it('makes cluster-scoped kinds, and the scale subresource on spec.replicas', () => {
    apiGenerator(tree, { operator: 'webapp', kind: 'Store', apiVersion: 'shop.example.com/v1', namespaced: false, scale: true, skipTasks: true });
    const api = text(tree, 'apps/webapp-operator/src/api/v1/store.ts');
    expect(api).toContain("scope: 'Cluster'");
    expect(api).toContain("group: 'shop.example.com'");
    expect(api).toContain("scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' }");
    expect(text(tree, 'apps/webapp-operator/src/controllers/store/store.int.test.ts')).toContain('const key = (name: string) => ({ name });');
  });

  it('adds a second version of a kind beside the first, leaving its controller alone, and says how to convert', async () => {
    apiGenerator(tree, { operator: 'webapp', kind: 'WebApp', skipTasks: true });
    const before = text(tree, 'apps/webapp-operator/src/api/index.ts');
    const log = vi.spyOn(console, 'log');
    await apiGenerator(tree, { operator: 'webapp', kind: 'WebApp', apiVersion: 'v1', skipTasks: true })();
    expect(tree.exists('apps/webapp-operator/src/api/v1/webapp.ts')).toBe(true);
    expect(text(tree, 'apps/webapp-operator/src/api/index.ts')).toBe(before);
    expect(log.mock.calls.flat().join('\n')).toContain('nx g @opkit/nx-plugin:webhook webapp --kind WebApp --conversion');
  });

  it('refuses what it cannot do, saying why', () => {
    expect(() => apiGenerator(tree, { operator: 'shop', kind: 'Store' })).toThrow(/no operator shop .*nx g @opkit\/nx-plugin:operator shop/);
    expect(() => apiGenerator(tree, { operator: 'webapp', kind: 'webApp' })).toThrow(/not a kind/);
    expect(() => apiGenerator(tree, { operator: 'webapp', kind: 'WebApp', group: 'apps' })).toThrow(/not an API group/);
    expect(() => apiGenerator(tree, { operator: 'webapp', kind: 'WebApp', group: 'a.example.com', apiVersion: 'b.example.com/v1' })).toThrow(
      /name different groups/,
    );
    apiGenerator(tree, { operator: 'webapp', kind: 'WebApp', skipTasks: true });
    expect(() => apiGenerator(tree, { operator: 'webapp', kind: 'WebApp', skipTasks: true })).toThrow(/v1alpha1\/webapp\.ts already exists/);
  });
});

describe('the webhook generator', () => {
  let tree: Tree;
  const src = 'apps/webapp-operator/src';
  beforeEach(() => {
    vi.spyOn(console, 'log').mockImplementation(() => undefined);
    tree = workspaceTree();
    operatorGenerator(tree, { name: 'webapp', skipTasks: true });
    apiGenerator(tree, { operator: 'webapp', kind: 'WebApp', group: 'apps.opkit.dev', skipTasks: true });
  });

  it('adds validating and mutating webhooks with their tests, listed for the operator and its chart, which now serves webhooks', () => {
    webhookGenerator(tree, { operator: 'webapp', kind: 'WebApp', validating: true, mutating: true, skipTasks: true });
    for (const f of [
      'webapp-validation.ts',
      'webapp-validation.test.ts',
      'webapp-validation.int.test.ts',
      'webapp-defaults.ts',
      'webapp-defaults.test.ts',
      'webapp-defaults.int.test.ts',
    ]) {
      expect(tree.exists(`${src}/webhooks/${f}`), f).toBe(true);
    }
    expect(text(tree, `${src}/webhooks/index.ts`)).toMatch(/\n {2}webAppValidation,\n {2}webAppDefaults,\n {2}\/\/ \+opkit:scaffold:admission/);
    expect(text(tree, `${src}/webhooks/webapp-defaults.ts`)).toContain("CREATED_BY = 'apps.opkit.dev/created-by'");
    expect(text(tree, 'charts/webapp-operator/templates/deployment.yaml')).toContain('(dict "ctx" . "extraArgs" list "extraEnv" list "webhooks" true)');
    expect(text(tree, 'charts/webapp-operator/templates/networkpolicy.yaml')).toContain('(dict "ctx" . "egress" "" "webhooks" true)');
  });

  it('ties versions together: the newest stored, the others converted, served from one CRD', () => {
    apiGenerator(tree, { operator: 'webapp', kind: 'WebApp', apiVersion: 'v1', skipTasks: true });
    apiGenerator(tree, { operator: 'webapp', kind: 'WebApp', apiVersion: 'v1beta1', skipTasks: true });
    webhookGenerator(tree, { operator: 'webapp', kind: 'WebApp', conversion: true, skipTasks: true });
    const versions = text(tree, `${src}/api/webapp-versions.ts`);
    expect(versions).toContain('defineVersionedResource(WebAppV1, [');
    expect(versions).toMatch(/spoke\(WebAppV1alpha1, WebAppV1,[\s\S]*spoke\(WebAppV1beta1, WebAppV1,/);
    const index = text(tree, `${src}/api/index.ts`);
    expect(index).not.toContain("import { WebApp } from './v1alpha1/webapp.js';");
    expect(index).toMatch(/\n {2}WebAppAPI,\n {2}\/\/ \+opkit:scaffold:resources/);
    expect(text(tree, `${src}/webhooks/index.ts`)).toMatch(/\n {2}WebAppAPI,\n {2}\/\/ \+opkit:scaffold:conversions/);
    expect(tree.exists(`${src}/webhooks/webapp-conversion.int.test.ts`)).toBe(true);
    // Admission webhooks added later are written for the stored version.
    webhookGenerator(tree, { operator: 'webapp', kind: 'WebApp', validating: true, skipTasks: true });
    expect(text(tree, `${src}/webhooks/webapp-validation.ts`)).toContain("from '../api/v1/webapp.js'");
  });

  it('refuses what it cannot do, saying why', () => {
    expect(() => webhookGenerator(tree, { operator: 'webapp', kind: 'WebApp' })).toThrow(/--validating, --mutating and\/or --conversion/);
    expect(() => webhookGenerator(tree, { operator: 'webapp', kind: 'Site', validating: true })).toThrow(
      /Site has no API .*nx g @opkit\/nx-plugin:api webapp --kind Site/,
    );
    expect(() => webhookGenerator(tree, { operator: 'webapp', kind: 'WebApp', conversion: true })).toThrow(/one version \(v1alpha1\): conversion needs two/);
  });
});
