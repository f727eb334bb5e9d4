import { describe, expect, it } from 'vitest';
import { manifestPushDigest, pushedDigest } from './push.js';

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

describe('manifestPushDigest: the index digest `docker manifest push` printed', () => {
  const digest = `sha256:${'ef'.repeat(32)}`;
  it('is the last line, after what docker says of each platform', () => {
    expect(manifestPushDigest(`Pushed ref localhost:5001/opkit/x@sha256:${'ab'.repeat(32)} with digest: sha256:${'ab'.repeat(32)}\n${digest}\n`, 't')).toBe(
      digest,
    );
  });
  it.each([
    ['nothing', ''],
    ['an error', 'error: manifest unknown'],
    ['a short digest', 'sha256:abc'],
    ['a digest with more after it', `${digest} done`],
  ])('refuses %s', (_name, stdout) => {
    expect(() => manifestPushDigest(stdout, 'localhost:5001/opkit/x:1.0.0')).toThrow(/docker manifest push localhost:5001\/opkit\/x:1.0.0 printed no digest/);
  });
});
