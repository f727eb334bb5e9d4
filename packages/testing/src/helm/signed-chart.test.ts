import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { workspaceRoot } from '../e2e/workspace.js';
import { chartImages, renderedImages } from './signed-chart.js';

const digest = (c: string) => `sha256:${c.repeat(64)}`;

describe('chartImages: the images a chart’s values name, and what each pins', () => {
  it.each([
    [
      'pinned, with its registry',
      { image: { registry: 'r.example', repository: 'o/a', digest: digest('a') } },
      [{ path: ['image'], repository: 'o/a', ref: `r.example/o/a@${digest('a')}` }],
    ],
    [
      'global.imageRegistry where the image names none (as opkit-lib renders it)',
      { global: { imageRegistry: 'g.example/' }, image: { registry: '', repository: 'o/a', digest: digest('a') } },
      [{ path: ['image'], repository: 'o/a', ref: `g.example/o/a@${digest('a')}` }],
    ],
    ['a tag but no digest: unpinned', { image: { repository: 'o/a', tag: '1.0' } }, [{ path: ['image'], repository: 'o/a', ref: undefined }]],
    ['a digest that is not one: unpinned', { image: { repository: 'o/a', digest: 'sha256:latest' } }, [{ path: ['image'], repository: 'o/a', ref: undefined }]],
    [
      'nested ones, wherever they are',
      { image: { repository: 'o/a', digest: digest('a') }, acme: { solver: { image: { repository: 'o/s', digest: digest('b') } } } },
      [
        { path: ['image'], repository: 'o/a', ref: `o/a@${digest('a')}` },
        { path: ['acme', 'solver', 'image'], repository: 'o/s', ref: `o/s@${digest('b')}` },
      ],
    ],
    ['none (lists and scalars are not images)', { args: ['repository'], repository: 7 }, []],
  ])('%s', (_name, values, images) => {
    expect(chartImages(values as Record<string, unknown>)).toEqual(images);
  });

  it("finds every image of this repository's charts, and none of them is pinned in the source (publishing pins them)", () => {
    const found = ['memcached-operator', 'cdn-operator', 'cert-operator'].map((c) =>
      chartImages(parse(readFileSync(join(workspaceRoot(import.meta.dirname), 'charts', c, 'values.yaml'), 'utf8')) as Record<string, unknown>),
    );
    expect(found.map((f) => f.map((i) => [i.path.join('.'), i.repository, i.ref]))).toEqual([
      [['image', 'opkit/memcached-operator', undefined]],
      [['image', 'opkit/cdn-operator', undefined]],
      [
        ['image', 'opkit/cert-operator', undefined],
        ['acme.solver.image', 'opkit/acme-solver', undefined],
      ],
    ]);
  });
});

describe('renderedImages: every container image rendered manifests run', () => {
  it('finds containers, initContainers and ephemeralContainers at any depth (Deployments, Jobs, CronJobs, bare Pods), once each', () => {
    const pod = (image: string) => ({ spec: { initContainers: [{ image: `${image}-init` }], containers: [{ image }, { name: 'no image' }] } });
    const objects = [
      { kind: 'Deployment', spec: { template: pod('a') } },
      { kind: 'CronJob', spec: { jobTemplate: { spec: { template: pod('b') } } } },
      { kind: 'Pod', ...pod('a'), metadata: { annotations: { image: 'not a container' } } },
      { kind: 'Pod', spec: { ephemeralContainers: [{ image: 'debug' }] } },
      null,
      { kind: 'ConfigMap', data: { containers: 'a string, not a list' } },
    ];
    expect(renderedImages(objects)).toEqual(['a', 'a-init', 'b', 'b-init', 'debug']);
  });
});
