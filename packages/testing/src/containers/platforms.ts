// The platforms a release builds images for, and what this machine needs to build for one that is
// not its own. The app images need no emulation at all: their build stages run on the machine's own
// platform (the bundle is JavaScript) and the last stage only copies files onto the runtime base.
// The runtime base does need it where it is built here (Debian's packages are configured, Node
// prints its version): the kernel runs the other platform's binaries through QEMU's user-mode
// emulator, registered with binfmt_misc with the F flag (the emulator is opened when registered, so
// it works inside containers and chroots that do not have it).
import { existsSync, readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { runLong, say } from './progress.js';
import { which } from './which.js';

export type Arch = 'amd64' | 'arm64';
export type Platform = `linux/${Arch}`;

/** What a release builds by default: the two platforms Kubernetes clusters run on. */
export const RELEASE_PLATFORMS: readonly Platform[] = ['linux/amd64', 'linux/arm64'];

/** Node's and the kernel's names for each architecture, and QEMU's emulator for it. */
const ARCHES: Record<Arch, { node: string; qemu: string }> = {
  amd64: { node: 'x64', qemu: 'qemu-x86_64' },
  arm64: { node: 'arm64', qemu: 'qemu-aarch64' },
};

export const archOf = (p: Platform): Arch => p.slice('linux/'.length) as Arch;
/** Node's name for the platform's architecture, as the npm packages of its official builds are named (node-linux-<arch>). */
export const nodeArch = (p: Platform): string => ARCHES[archOf(p)].node;

/**
 * What names an image built here for `platform`: `arm64-` in its tag, nothing for amd64 (whose
 * tags are what they were before other platforms, so the images cached under them stay valid).
 */
export const tagArch = (p: Platform): string => (archOf(p) === 'amd64' ? '' : `${archOf(p)}-`);

/** docker build's flag for `platform`: none for this machine's own (a build's default), `--platform` for another. */
export const platformFlag = (p: Platform | undefined): string[] => (p && p !== hostPlatform() ? ['--platform', p] : []);

/** This machine's platform. */
export function hostPlatform(arch: string = process.arch): Platform {
  const found = (Object.keys(ARCHES) as Arch[]).find((a) => ARCHES[a].node === arch);
  if (!found) throw new Error(`images are built on linux/amd64 or linux/arm64 machines, not on ${arch}`);
  return `linux/${found}`;
}

/** `linux/amd64,linux/arm64` (or `amd64,arm64`) → the platforms, each once, in that order; refuses others. Pure. */
export function parsePlatforms(list: string): Platform[] {
  const out: Platform[] = [];
  for (const item of list.split(',').map((s) => s.trim())) {
    if (!item) continue;
    const arch = item.replace(/^linux\//, '');
    if (!Object.hasOwn(ARCHES, arch)) throw new Error(`--platforms: ${item} is not one of ${RELEASE_PLATFORMS.join(', ')}`);
    const p = `linux/${arch}` as Platform;
    if (!out.includes(p)) out.push(p);
  }
  if (!out.length) throw new Error(`--platforms: name at least one of ${RELEASE_PLATFORMS.join(', ')}`);
  return out;
}

/** binfmt_misc's entry for an emulator, as the kernel prints it → whether it is on and opened at registration (F). Pure. */
export function binfmtUsable(entry: string | undefined): boolean {
  if (!entry) return false;
  const enabled = entry.split('\n')[0]?.trim() === 'enabled';
  const flags = /^flags:\s*(\S*)/m.exec(entry)?.[1] ?? '';
  return enabled && flags.includes('F');
}

const BINFMT = '/proc/sys/fs/binfmt_misc';
const entryOf = (qemu: string) => (existsSync(`${BINFMT}/${qemu}`) ? readFileSync(`${BINFMT}/${qemu}`, 'utf8') : undefined);

/**
 * Makes sure this machine runs `platform`'s binaries: nothing for its own; else QEMU's static
 * user-mode emulators from Debian's packages (qemu-user-static, binfmt-support), registered with
 * binfmt_misc (mounted first where it is not). Root on Debian does this once; elsewhere it says
 * what is missing, and how to build without that platform.
 */
export async function ensureEmulation(platform: Platform): Promise<void> {
  if (platform === hostPlatform()) return;
  const { qemu } = ARCHES[archOf(platform)];
  if (binfmtUsable(entryOf(qemu))) return;
  const cannot = (why: string) =>
    new Error(
      `building ${platform} images on this ${hostPlatform()} machine needs QEMU's user-mode emulator registered with binfmt_misc (${why}): as root on Debian, apt-get install qemu-user-static binfmt-support; or build for this machine's platform alone (--platforms ${hostPlatform()})`,
    );
  if (process.getuid?.() !== 0 || !which('apt-get')) throw cannot('not a root Debian shell, so opkit cannot install it');
  if (!existsSync(`${BINFMT}/register`)) {
    const mounted = spawnSync('mount', ['-t', 'binfmt_misc', 'binfmt_misc', BINFMT], { encoding: 'utf8' });
    if (mounted.status !== 0) throw cannot(`binfmt_misc could not be mounted: ${mounted.stderr.trim()}`);
  }
  if (!which(`${qemu}-static`) || !which('update-binfmts')) {
    say(`installing QEMU's user-mode emulators from Debian's packages, to build ${platform} images (once)…`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const install = () =>
      runLong('apt-get', ['install', '-y', '-q', '--no-install-recommends', 'qemu-user-static', 'binfmt-support'], {
        label: 'installing qemu-user-static',
        env,
      });
    await install().catch(async () => {
      await runLong('apt-get', ['update', '-q'], { label: 'apt-get update', env });
      await install();
    });
  }
  // The package registers its emulators when installed; where binfmt_misc was mounted only now (or
  // an emulator was turned off), ask again.
  if (!binfmtUsable(entryOf(qemu))) spawnSync('update-binfmts', ['--enable', qemu], { stdio: 'ignore' });
  if (!binfmtUsable(entryOf(qemu))) throw cannot(`${BINFMT}/${qemu} is ${entryOf(qemu) ? 'registered without the F flag, or disabled' : 'not registered'}`);
  say(`${platform} binaries run here through ${qemu}`);
}
