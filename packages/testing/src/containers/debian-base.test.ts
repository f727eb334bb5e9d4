import { describe, expect, it } from 'vitest';
import { versions } from '../assets/binaries.js';
import { debianBaseTag } from './debian-base.js';

describe("debianBaseTag: one Debian base per recipe and platform, in the engine's image store", () => {
  it('names the architecture of any platform but amd64 (whose tags stay what they were), and digests it', () => {
    const amd64 = debianBaseTag('linux/amd64');
    const arm64 = debianBaseTag('linux/arm64');
    expect(amd64).toMatch(new RegExp(`^opkit\\.local/debian:${versions.debian}-[0-9a-f]{10}$`));
    expect(arm64).toMatch(new RegExp(`^opkit\\.local/debian:${versions.debian}-arm64-[0-9a-f]{10}$`));
    expect(arm64.slice(-10)).not.toBe(amd64.slice(-10));
    expect(debianBaseTag()).toBe(amd64);
  });
});
