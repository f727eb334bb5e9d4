import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { binfmtUsable, hostPlatform, nodeArch, parsePlatforms, RELEASE_PLATFORMS } from './platforms.js';

describe('platforms: what a release builds for', () => {
  it.each([
    ['linux/amd64,linux/arm64', ['linux/amd64', 'linux/arm64']],
    ['arm64', ['linux/arm64']],
    [' linux/arm64 , amd64 ', ['linux/arm64', 'linux/amd64']],
    ['amd64,linux/amd64', ['linux/amd64']],
  ])('parsePlatforms(%j)', (list, want) => {
    expect(parsePlatforms(list)).toEqual(want);
  });

  it.each([
    ['another architecture', 'linux/s390x', /linux\/s390x is not one of linux\/amd64, linux\/arm64/],
    ['another system', 'windows/amd64', /windows\/amd64 is not one of/],
    ['nothing', ' , ', /name at least one of/],
  ])('parsePlatforms refuses %s', (_name, list, error) => {
    expect(() => parsePlatforms(list)).toThrow(error);
  });

  it('parsePlatforms keeps the order given and names each platform once, however it is spelled', () => {
    const spelled = fc.constantFrom('amd64', 'linux/amd64', 'arm64', 'linux/arm64');
    fc.assert(
      fc.property(fc.array(spelled, { minLength: 1, maxLength: 6 }), (items) => {
        const full = items.map((i) => (i.startsWith('linux/') ? i : `linux/${i}`));
        expect(parsePlatforms(items.join(','))).toEqual([...new Set(full)]);
      }),
    );
  });

  it("names the machine's platform and Node's architecture for it", () => {
    expect(hostPlatform('x64')).toBe('linux/amd64');
    expect(hostPlatform('arm64')).toBe('linux/arm64');
    expect(() => hostPlatform('ppc64')).toThrow(/not on ppc64/);
    expect(RELEASE_PLATFORMS.map(nodeArch)).toEqual(['x64', 'arm64']);
  });

  it.each([
    ['on, opened at registration', 'enabled\ninterpreter /usr/libexec/qemu-binfmt/aarch64-binfmt-P\nflags: PF\noffset 0\n', true],
    ['on, but looked up in each container (no F): fails in a build', 'enabled\ninterpreter /usr/bin/qemu-aarch64-static\nflags: \noffset 0\n', false],
    ['off', 'disabled\ninterpreter /usr/libexec/qemu-binfmt/aarch64-binfmt-P\nflags: PF\n', false],
    ['not registered', undefined, false],
  ])('binfmtUsable: %s', (_name, entry, want) => {
    expect(binfmtUsable(entry)).toBe(want);
  });
});
