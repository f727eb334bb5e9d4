import { describe, expect, it } from 'vitest';
import { imagePlan, probeRegistries } from './image-plan.js';

describe('imagePlan', () => {
  const official = {
    nodeBuild: 'official',
    nodeRuntime: 'official',
    static: 'official',
    kindNode: 'official',
    memcached: 'official',
    nginx: 'official',
    traefik: 'official',
    shell: 'official',
  };
  const local = {
    nodeBuild: 'local',
    nodeRuntime: 'local',
    static: 'local',
    kindNode: 'local',
    memcached: 'local',
    nginx: 'local',
    traefik: 'local',
    shell: 'local',
  };

  it.each([
    // A user's machine: the official bases and kind's own node image, nothing built locally.
    ['every registry answers: official images', { 'docker.io': true, 'gcr.io': true }, undefined, official],
    // These machines: no registry answers, so everything is built here.
    ['no registry answers: local builds', { 'docker.io': false, 'gcr.io': false }, undefined, local],
    [
      'only Docker Hub answers: the gcr.io images are built here',
      { 'docker.io': true, 'gcr.io': false },
      undefined,
      { ...official, nodeRuntime: 'local', static: 'local' },
    ],
    ['OPKIT_IMAGES=local where registries answer', { 'docker.io': true, 'gcr.io': true }, 'local', local],
    ['OPKIT_IMAGES=official where none does', {}, 'official', official],
  ])('%s', (_n, answers, force, want) => {
    expect(imagePlan(answers, force)).toEqual(want);
  });

  it('probes each registry, answering false quickly where the network is closed', async () => {
    const t0 = Date.now();
    const answers = await probeRegistries();
    expect(Object.keys(answers).sort()).toEqual(['docker.io', 'gcr.io']);
    expect(Date.now() - t0).toBeLessThan(12_000);
  });
});
