import { describe, expect, it } from 'vitest';
import { pushedDigest } from './push.js';

describe('pushedDigest: the digest a push gave one repository, from the RepoDigests docker keeps', () => {
  const digest = `sha256:${'ab'.repeat(32)}`;
  const other = `sha256:${'cd'.repeat(32)}`;
  it('takes the entry of this registry and repository, among others of the same image', () => {
    expect(pushedDigest([`ghcr.io/acme/x@${other}`, `localhost:5001/opkit/x@${digest}`], 'localhost:5001', 'opkit/x')).toBe(digest);
  });
  it.each([
    ['none at all', []],
    ['only another repository’s', [`localhost:5001/opkit/x-bundle@${digest}`]],
    ['only another registry’s', [`localhost:5002/opkit/x@${digest}`]],
    ['a digest of another algorithm', [`localhost:5001/opkit/x@sha512:${'ab'.repeat(64)}`]],
    ['a truncated digest', ['localhost:5001/opkit/x@sha256:abc']],
  ])('refuses %s, saying what there was', (_name, repoDigests) => {
    expect(() => pushedDigest(repoDigests, 'localhost:5001', 'opkit/x')).toThrow(/no sha256 digest for localhost:5001\/opkit\/x among the image's RepoDigests/);
  });
});
