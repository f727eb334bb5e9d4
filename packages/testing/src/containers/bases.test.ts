import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isLocalBuild, officialPin, splitRef } from './bases.js';

const D = `sha256:${'a'.repeat(64)}`;

describe('pinning the bases by digest', () => {
  it.each([
    ['node:24.21.0-bookworm-slim', { repository: 'node', tag: '24.21.0-bookworm-slim' }],
    ['gcr.io/distroless/nodejs24-debian12:nonroot', { repository: 'gcr.io/distroless/nodejs24-debian12', tag: 'nonroot' }],
    ['localhost:5001/opkit/base/node-runtime', { repository: 'localhost:5001/opkit/base/node-runtime' }],
    ['localhost:5001/opkit/base/node-runtime:24', { repository: 'localhost:5001/opkit/base/node-runtime', tag: '24' }],
  ])('splits %s into its repository and tag (a registry port is not a tag)', (ref, parts) => {
    expect(splitRef(ref)).toEqual(parts);
  });

  it.each([
    ['node:24.21.0-bookworm-slim', [`node@${D}`], `node:24.21.0-bookworm-slim@${D}`],
    ['docker.io/library/node:24', [`node@${D}`], `docker.io/library/node:24@${D}`],
    [
      'gcr.io/distroless/nodejs24-debian12:nonroot',
      [`other@sha256:${'b'.repeat(64)}`, `gcr.io/distroless/nodejs24-debian12@${D}`],
      `gcr.io/distroless/nodejs24-debian12:nonroot@${D}`,
    ],
  ])('pins the official %s by the digest its own registry gave', (ref, digests, pinned) => {
    expect(officialPin(ref, digests)).toBe(pinned);
  });

  it("refuses a digest of another repository (an image re-tagged here is not the registry's)", () => {
    expect(() => officialPin('node:24', [`mirror.example/node@${D}`])).toThrow(/no digest from its registry/);
  });

  it('knows the images built on this machine', () => {
    expect(isLocalBuild('opkit.local/node-runtime:24.21.0-f1b0b62332')).toBe(true);
    expect(isLocalBuild('node:24')).toBe(false);
  });

  it("pins only by a digest docker listed for the base's own repository, whatever docker lists", () => {
    const name = fc.stringMatching(/^[a-z0-9][a-z0-9._/:-]{0,30}$/);
    fc.assert(
      fc.property(
        name,
        fc.array(
          fc.oneof(
            fc.string(),
            name.map((n) => `${n}@${D}`),
          ),
          { maxLength: 5 },
        ),
        fc.boolean(),
        (ref, others, listed) => {
          // Often docker does list the base's own repository, among other lines.
          const digests = listed ? [...others, `${splitRef(ref).repository}@${D}`] : others;
          let pinned: string;
          try {
            pinned = officialPin(ref, digests);
          } catch (e) {
            expect((e as Error).message).toMatch(/no digest from its registry/);
            return;
          }
          const digest = pinned.slice(pinned.indexOf('@'));
          expect(
            digests.some((d) => d.endsWith(digest) && d.slice(0, d.indexOf('@')).endsWith(splitRef(ref).repository.replace(/^docker\.io\/(library\/)?/, ''))),
          ).toBe(true);
          expect(pinned.startsWith(splitRef(ref).repository)).toBe(true);
        },
      ),
    );
  });
});
