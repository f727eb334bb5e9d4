import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheRoot, versions } from '../assets/binaries.js';
import { buildKitClient } from './buildkit.js';
import { imageId } from './docker.js';
import { withLock } from './lock.js';
import { archOf, ensureEmulation, hostPlatform, platformFlag, tagArch, type Platform } from './platforms.js';
import { runLong, say, seconds } from './progress.js';
import { which } from './which.js';

/** What debootstrap puts in the base: minbase plus what the images built on it all need. */
const INCLUDE = ['ca-certificates'];
const MIRROR = () => process.env.OPKIT_DEBIAN_MIRROR || 'http://deb.debian.org/debian';
const SECURITY = () => process.env.OPKIT_DEBIAN_SECURITY_MIRROR || 'http://deb.debian.org/debian-security';
// Bump when the recipe below changes, so cached bases are rebuilt.
const RECIPE = 1;

const sourcesList = (suite: string) =>
  [`deb ${MIRROR()} ${suite} main`, `deb ${MIRROR()} ${suite}-updates main`, `deb ${SECURITY()} ${suite}-security main`, ''].join('\n');

/** The tag of the Debian base for these settings and platform: opkit.local/debian:<suite>-[<arch>-]<digest> (tagArch). */
export function debianBaseTag(platform: Platform = 'linux/amd64'): string {
  const arch = archOf(platform);
  const settings = { RECIPE, INCLUDE, suite: versions.debian, sources: sourcesList(versions.debian), ...(arch === 'amd64' ? {} : { arch }) };
  const digest = createHash('sha256').update(JSON.stringify(settings)).digest('hex').slice(0, 10);
  return `opkit.local/debian:${versions.debian}-${tagArch(platform)}${digest}`;
}

async function ensureDebootstrap(): Promise<void> {
  if (which('debootstrap')) return;
  if (process.getuid?.() !== 0 || !which('apt-get')) {
    throw new Error(
      'building the Debian base image needs debootstrap (and root): install it (apt-get install debootstrap), or use a machine where the official images can be pulled',
    );
  }
  say("installing debootstrap from Debian's packages…");
  await runLong('apt-get', ['install', '-y', '-q', '--no-install-recommends', 'debootstrap'], {
    label: 'installing debootstrap',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}

/**
 * A minimal Debian, bootstrapped here from Debian's archive (`debootstrap --variant=minbase`) and
 * imported as an image: the base every locally built image starts from, where no registry answers.
 * Built once per recipe and platform (about a minute for this machine's; several for another,
 * whose packages are configured under QEMU), then taken from the engine's image store.
 */
export async function ensureDebianBase(platform: Platform = hostPlatform()): Promise<string> {
  const tag = debianBaseTag(platform);
  if (imageId(tag)) return tag;
  const arch = archOf(platform);
  const foreign = platform !== hostPlatform();
  return withLock(
    join(cacheRoot(), 'containers', 'debian.lock'),
    async () => {
      if (imageId(tag)) return tag;
      await ensureDebootstrap();
      await ensureEmulation(platform);
      const t0 = Date.now();
      const dir = join(cacheRoot(), 'containers', `rootfs-${process.pid}`);
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      try {
        say(`bootstrapping Debian ${versions.debian} (minbase, ${arch}) from ${MIRROR()} (${foreign ? 'a few minutes under QEMU' : 'about a minute'}, once)…`);
        await runLong('debootstrap', ['--variant=minbase', `--arch=${arch}`, `--include=${INCLUDE.join(',')}`, versions.debian, dir, MIRROR()], {
          label: 'bootstrapping Debian',
          echo: /^I: (Retrieving Release|Found packages|Installing core|Unpacking the base|Configuring the base|Base system)/,
          logFile: join(cacheRoot(), 'containers', 'debootstrap.log'),
        });
        writeFileSync(join(dir, 'etc/apt/sources.list'), sourcesList(versions.debian));
        rmSync(join(dir, 'var/cache/apt/archives'), { recursive: true, force: true });
        mkdirSync(join(dir, 'var/cache/apt/archives/partial'), { recursive: true });
        say(`importing it as ${tag}…`);
        const config = ['ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'CMD ["bash"]'];
        if (!foreign)
          await runLong('sh', ['-c', `tar -C '${dir}' -c . | docker import ${config.map((c) => `--change '${c}'`).join(' ')} - '${tag}'`], {
            label: 'importing the Debian base',
          });
        else {
          // docker import records the engine's own architecture whatever it is told (20.10): a
          // build FROM scratch for the platform records the one the files are for, so builds for
          // that platform find it in the image store.
          const ctx = join(cacheRoot(), 'containers', `rootfs-context-${process.pid}`);
          mkdirSync(ctx, { recursive: true });
          try {
            await runLong('tar', ['-C', dir, '-cf', join(ctx, 'rootfs.tar'), '.'], { label: 'packing the Debian base' });
            writeFileSync(join(ctx, 'Dockerfile'), ['FROM scratch', 'ADD rootfs.tar /', ...config, ''].join('\n'));
            const client = buildKitClient();
            await runLong(client.command, [...client.args, '--progress=plain', ...platformFlag(platform), '-t', tag, ctx], {
              label: 'importing the Debian base',
              env: { ...process.env, ...client.env },
            });
          } finally {
            rmSync(ctx, { recursive: true, force: true });
          }
        }
        say(`Debian base ${tag} ready in ${seconds(t0)}`);
        return tag;
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    (holder) => say(`waiting for process ${holder}, which is bootstrapping Debian…`),
  );
}
