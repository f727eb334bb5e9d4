import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheRoot, versions } from '../assets/binaries.js';
import { imageId } from './docker.js';
import { withLock } from './lock.js';
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

/** The tag of the Debian base for these settings: opkit.local/debian:<suite>-<digest>. */
export function debianBaseTag(): string {
  const digest = createHash('sha256')
    .update(JSON.stringify({ RECIPE, INCLUDE, suite: versions.debian, sources: sourcesList(versions.debian) }))
    .digest('hex')
    .slice(0, 10);
  return `opkit.local/debian:${versions.debian}-${digest}`;
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
 * Built once per recipe (about a minute), then taken from the engine's image store.
 */
export async function ensureDebianBase(): Promise<string> {
  const tag = debianBaseTag();
  if (imageId(tag)) return tag;
  return withLock(
    join(cacheRoot(), 'containers', 'debian.lock'),
    async () => {
      if (imageId(tag)) return tag;
      await ensureDebootstrap();
      const t0 = Date.now();
      const dir = join(cacheRoot(), 'containers', `rootfs-${process.pid}`);
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      try {
        say(`bootstrapping Debian ${versions.debian} (minbase) from ${MIRROR()} (about a minute, once)…`);
        await runLong('debootstrap', ['--variant=minbase', `--include=${INCLUDE.join(',')}`, versions.debian, dir, MIRROR()], {
          label: 'bootstrapping Debian',
          echo: /^I: (Retrieving Release|Found packages|Installing core|Unpacking the base|Configuring the base|Base system)/,
          logFile: join(cacheRoot(), 'containers', 'debootstrap.log'),
        });
        writeFileSync(join(dir, 'etc/apt/sources.list'), sourcesList(versions.debian));
        rmSync(join(dir, 'var/cache/apt/archives'), { recursive: true, force: true });
        mkdirSync(join(dir, 'var/cache/apt/archives/partial'), { recursive: true });
        say(`importing it as ${tag}…`);
        await runLong(
          'sh',
          [
            '-c',
            `tar -C '${dir}' -c . | docker import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' --change 'CMD ["bash"]' - '${tag}'`,
          ],
          { label: 'importing the Debian base' },
        );
        say(`Debian base ${tag} ready in ${seconds(t0)}`);
        return tag;
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    (holder) => say(`waiting for process ${holder}, which is bootstrapping Debian…`),
  );
}
