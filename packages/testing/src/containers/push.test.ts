import { describe, expect, it } from 'vitest';
import { parseManifestDigest } from './push.js';

describe('parseManifestDigest: the Docker-Content-Digest a registry answers with', () => {
  const digest = `sha256:${'ab'.repeat(32)}`;
  it('takes a sha256 digest as it is', () => {
    expect(parseManifestDigest(digest)).toBe(digest);
  });
  it.each([
    ['absent', null],
    ['empty', ''],
    ['another algorithm', `sha512:${'ab'.repeat(64)}`],
    ['too short', 'sha256:abc'],
    ['upper case (not canonical)', `sha256:${'AB'.repeat(32)}`],
    ['with a trailing reference', `${digest} extra`],
  ])('refuses one %s, saying what came', (_name, header) => {
    expect(() => parseManifestDigest(header)).toThrow(/no sha256 Docker-Content-Digest/);
  });
});
