import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import type { PushedImage } from '../containers/push.js';
import { workspaceRoot } from '../e2e/workspace.js';
import { helmTemplate } from './chart.js';
import { parseHelmDigest, pinImages } from './publish.js';

const root = workspaceRoot(import.meta.dirname);
const values = (chart: string) => readFileSync(join(root, 'charts', chart, 'values.yaml'), 'utf8');
const pushed = (repository: string, hex: string, registry = 'localhost:5001', path = repository): PushedImage => {
  const digest = `sha256:${hex.repeat(64)}`;
  return { registry, repository: path, source: repository, tag: '0.1.0', digest, ref: `${registry}/${path}@${digest}` };
};
const operator = pushed('opkit/cert-operator', 'a');
const solver = pushed('opkit/acme-solver', 'b');

describe('pinImages: a chart’s values with its images pinned to what was pushed', () => {
  it("pins the cert operator's own image and its solver's, wherever in the values they are", () => {
    const { yaml, pins } = pinImages(values('cert-operator'), [operator, solver]);
    expect(pins).toEqual([
      { path: ['image'], ref: operator.ref },
      { path: ['acme', 'solver', 'image'], ref: solver.ref },
    ]);
    const v = parse(yaml) as { image: Record<string, string>; acme: { solver: { image: Record<string, string> } } };
    expect(v.image).toMatchObject({ registry: 'localhost:5001', repository: 'opkit/cert-operator', tag: '0.1.0', digest: operator.digest });
    expect(v.acme.solver.image).toMatchObject({ registry: 'localhost:5001', repository: 'opkit/acme-solver', digest: solver.digest });
  });

  it('pins by the repository the values name: published under another path, the image is renamed there', () => {
    const elsewhere = pushed('opkit/memcached-operator', 'd', 'ghcr.io', 'acme/operators/memcached-operator');
    const { yaml, pins } = pinImages(values('memcached-operator'), [elsewhere]);
    expect(pins).toEqual([{ path: ['image'], ref: `ghcr.io/acme/operators/memcached-operator@${elsewhere.digest}` }]);
    expect((parse(yaml) as { image: Record<string, string> }).image).toMatchObject({ registry: 'ghcr.io', repository: 'acme/operators/memcached-operator' });
  });

  it('keeps every comment and changes no other value: the packaged values are the documented ones', () => {
    const before = values('cert-operator');
    const { yaml } = pinImages(before, [operator, solver]);
    const comments = (t: string) => t.split('\n').filter((l) => l.trim().startsWith('#'));
    expect(comments(yaml)).toEqual(comments(before));
    const strip = (v: Record<string, unknown>) => {
      const c = structuredClone(v) as { image: Record<string, unknown>; acme: { solver: { image: Record<string, unknown> } } };
      for (const i of [c.image, c.acme.solver.image]) for (const k of ['registry', 'repository', 'tag', 'digest']) delete i[k];
      return c;
    };
    expect(strip(parse(yaml) as Record<string, unknown>)).toEqual(strip(parse(before) as Record<string, unknown>));
  });

  it('leaves a chart alone when none of its images was pushed (the caller refuses to publish it)', () => {
    const { yaml, pins } = pinImages(values('memcached-operator'), [operator]);
    expect(pins).toEqual([]);
    expect(yaml).toBe(values('memcached-operator'));
  });

  it('renders: the Deployment and the solver flag name the images by digest', async () => {
    const { yaml } = pinImages(values('cert-operator'), [operator, solver]);
    const rendered = parseAllDocuments(await helmTemplate(join(root, 'charts/cert-operator'), { values: parse(yaml) as Record<string, unknown> })).map(
      (d) => d.toJS() as { kind?: string; spec?: { template: { spec: { containers: { image: string; args?: string[] }[] } } } },
    );
    const deployment = rendered.find((d) => d?.kind === 'Deployment')!;
    const container = deployment.spec!.template.spec.containers[0]!;
    expect(container.image).toBe(operator.ref);
    expect(container.args?.join(' ')).toContain(solver.ref);
  });
});

describe('parseHelmDigest', () => {
  const digest = `sha256:${'c'.repeat(64)}`;
  it('takes the digest helm push prints', () => {
    expect(parseHelmDigest(`Pushed: localhost:5001/charts/cert-operator:0.1.0\nDigest: ${digest}\n`)).toBe(digest);
  });
  it('refuses output without one, quoting it', () => {
    expect(() => parseHelmDigest('Error: unexpected status from HEAD request')).toThrow(/helm reported no digest: Error: unexpected status/);
  });
});
