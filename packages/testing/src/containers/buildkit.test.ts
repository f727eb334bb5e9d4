import { describe, expect, it } from 'vitest';
import { chooseBuildKitClient } from './buildkit.js';

describe('chooseBuildKitClient', () => {
  it.each([
    [
      'buildx wherever it is installed',
      [{ path: 'docker', version: '28.2.2', buildx: true }],
      { command: 'docker', args: ['buildx', 'build', '--load'], env: {} },
    ],
    // This machine: docker 28 without buildx on PATH, Debian's docker.io 20.10 client in /usr/bin.
    [
      'a pre-23 client when the newer one lacks buildx',
      [
        { path: 'docker', version: '28.2.2', buildx: false },
        { path: '/usr/bin/docker', version: '20.10.24+dfsg1', buildx: false },
      ],
      { command: '/usr/bin/docker', args: ['build'], env: { DOCKER_BUILDKIT: '1' } },
    ],
  ])('%s', (_n, clients, want) => {
    expect(chooseBuildKitClient(clients)).toEqual(want);
  });

  it('says why when no client can', () => {
    expect(
      chooseBuildKitClient([
        { path: 'docker', version: '28.2.2', buildx: false },
        { path: '/usr/bin/docker', buildx: false },
      ]),
    ).toEqual({
      unavailable: 'no docker client here can build with BuildKit (seen: docker 28.2.2); install the buildx plugin',
    });
  });
});
