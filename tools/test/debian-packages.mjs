#!/usr/bin/env node
// Installs the Debian packages some tests run for real, where this is a root shell with apt-get:
// nginx (the CdnCluster configurations checked and served) and BIND 9 (the DNS server of the
// ACME DNS-01 tests). Elsewhere it says which tests will report themselves skipped. The packages'
// own daemons are stopped: the tests start their own.
import { spawnSync } from 'node:child_process';

const PACKAGES = [
  { binary: 'nginx', pkg: 'nginx-light', daemon: 'nginx', for: 'the nginx configuration checks' },
  { binary: 'named', pkg: 'bind9', daemon: 'named', for: 'the DNS-01 tests (BIND 9)' },
];

const has = (bin) => spawnSync('sh', ['-c', `command -v ${bin} || test -x /usr/sbin/${bin}`], { stdio: 'ignore' }).status === 0;
const missing = PACKAGES.filter((p) => !has(p.binary));
if (!missing.length) process.exit(0);
const root = process.getuid?.() === 0;
const apt = has('apt-get');
if (!root || !apt) {
  for (const p of missing)
    console.log(`    ${p.binary} is not installed and this is not a root Debian shell: ${p.for} will report themselves skipped (install ${p.pkg})`);
  process.exit(0);
}
const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
const pkgs = missing.map((p) => p.pkg);
console.log(`    installing ${pkgs.join(', ')} from Debian's packages (for ${missing.map((p) => p.for).join(' and ')})…`);
const install = () =>
  spawnSync('apt-get', ['install', '-y', '-q', '--no-install-recommends', ...pkgs], { env, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
let r = install();
if (r.status !== 0) {
  spawnSync('apt-get', ['update', '-q'], { env, stdio: 'ignore' });
  r = install();
}
if (r.status !== 0) console.log(`    could not install ${pkgs.join(', ')}: ${r.stderr.trim().split('\n').pop()}; those tests will report themselves skipped`);
for (const p of missing) spawnSync('sh', ['-c', `service ${p.daemon} stop || pkill -x ${p.daemon}`], { stdio: 'ignore' });
