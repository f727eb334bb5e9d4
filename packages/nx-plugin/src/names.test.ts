import { describe, expect, it } from 'vitest';
import { checkGroup, checkVersion, compareVersions, kindNames, operatorNames, pluralOf } from './names.js';

describe('operatorNames', () => {
  it('derives every name of an operator from one word, with or without -operator', () => {
    for (const given of ['webapp', 'webapp-operator']) {
      expect(operatorNames(given)).toEqual({
        name: 'webapp',
        app: 'webapp-operator',
        project: '@opkit/webapp-operator',
        e2eProject: '@opkit/webapp-operator-e2e',
        title: 'Webapp',
        pascal: 'Webapp',
      });
    }
    expect(operatorNames('web-app')).toMatchObject({ title: 'Web app', pascal: 'WebApp', app: 'web-app-operator' });
  });

  it.each(['WebApp', '1web', 'web_app', 'web-', '', 'x'.repeat(41)])('refuses %j, which cannot name Kubernetes objects', (given) => {
    expect(() => operatorNames(given)).toThrow(/not an operator name/);
  });
});

describe('kindNames and pluralOf', () => {
  it.each([
    ['WebApp', 'webapps'],
    ['Policy', 'policies'],
    ['Gateway', 'gateways'],
    ['Ingress', 'ingresses'],
    ['Box', 'boxes'],
    ['Batch', 'batches'],
  ])('%s → %s', (kind, plural) => {
    expect(kindNames(kind).plural).toBe(plural);
  });

  it('keeps a plural given explicitly, and camel-cases for variables', () => {
    expect(kindNames('Octopus', 'octopodes')).toEqual({ kind: 'Octopus', lower: 'octopus', plural: 'octopodes', camel: 'octopus' });
    expect(pluralOf('person')).toBe('persons');
  });

  it.each(['webApp', 'Web-App', 'Web App', ''])('refuses the kind %j', (kind) => {
    expect(() => kindNames(kind)).toThrow(/not a kind/);
  });
});

describe('groups and versions', () => {
  it('takes DNS names with a dot as groups', () => {
    expect(checkGroup('apps.opkit.dev')).toBe('apps.opkit.dev');
    for (const g of ['apps', 'Apps.example.com', 'apps..example.com', '-apps.example.com']) expect(() => checkGroup(g)).toThrow(/not an API group/);
  });

  it('takes Kubernetes versions', () => {
    for (const v of ['v1', 'v2', 'v1beta1', 'v1alpha12']) expect(checkVersion(v)).toBe(v);
    for (const v of ['1', 'v0', 'v1beta', 'v1gamma1', 'V1']) expect(() => checkVersion(v)).toThrow(/not an API version/);
  });

  it('orders versions as Kubernetes prefers them: GA over beta over alpha, then by number', () => {
    expect(['v1', 'v1alpha1', 'v2beta1', 'v1beta2', 'v1beta1', 'v2', 'v1alpha2'].sort(compareVersions)).toEqual([
      'v1alpha1',
      'v1alpha2',
      'v1beta1',
      'v1beta2',
      'v2beta1',
      'v1',
      'v2',
    ]);
  });
});
