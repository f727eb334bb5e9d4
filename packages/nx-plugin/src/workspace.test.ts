import { createTree } from '@nx/devkit/testing.js';
import { describe, expect, it } from 'vitest';
import { addDockerfileWorkspaces, addProjectReferences, addReadmeResource, addReadmeRow } from './workspace.js';

describe('addDockerfileWorkspaces', () => {
  it("adds each package.json to the deps stage in the file's order (packages, apps, e2e; by name), once", () => {
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
      ].join('\n'),
    );
    for (let i = 0; i < 2; i++) addDockerfileWorkspaces(tree, ['apps/webapp-operator', 'e2e/webapp-operator-e2e']);
    expect(tree.read('apps/Dockerfile', 'utf8')!.split('\n')).toEqual([
      'FROM node AS deps',
      'COPY package.json package-lock.json ./',
      'COPY packages/runtime/package.json packages/runtime/',
      'COPY apps/memcached-operator/package.json apps/memcached-operator/',
      'COPY apps/webapp-operator/package.json apps/webapp-operator/',
      'COPY e2e/memcached-operator-e2e/package.json e2e/memcached-operator-e2e/',
      'COPY e2e/webapp-operator-e2e/package.json e2e/webapp-operator-e2e/',
      'RUN npm ci',
    ]);
  });
});

describe('addProjectReferences', () => {
  it('references the new projects from the root tsconfig.json, as nx sync would', () => {
    const tree = createTree();
    tree.write('tsconfig.json', JSON.stringify({ files: [], references: [{ path: './packages/runtime' }] }));
    addProjectReferences(tree, ['apps/webapp-operator', 'packages/runtime']);
    expect(JSON.parse(tree.read('tsconfig.json', 'utf8')!).references).toEqual([{ path: './packages/runtime' }, { path: './apps/webapp-operator' }]);
  });
});

describe("the README's table of operators", () => {
  it('gets a row for a new operator, and its kinds as they come', () => {
    const tree = createTree();
    tree.write(
      'README.md',
      ['# opkit', '', '| operator | resources | what it does |', '| --- | --- | --- |', '| memcached | `Memcached` | the classic |', '', 'more'].join('\n'),
    );
    addReadmeRow(tree, 'webapp', 'Runs web apps.');
    addReadmeRow(tree, 'webapp', 'Runs web apps.');
    expect(tree.read('README.md', 'utf8')).toContain(
      '| memcached | `Memcached` | the classic |\n| webapp | (none yet: `nx g @opkit/nx-plugin:api webapp --kind …`) | Runs web apps. |\n\nmore',
    );
    addReadmeResource(tree, 'webapp', '`WebApp` (`apps.opkit.dev/v1alpha1`)');
    addReadmeResource(tree, 'webapp', '`Site` (`apps.opkit.dev/v1alpha1`)');
    expect(tree.read('README.md', 'utf8')).toContain('| webapp | `WebApp` (`apps.opkit.dev/v1alpha1`), `Site` (`apps.opkit.dev/v1alpha1`) | Runs web apps. |');
  });
});
