import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../net/ports.js';
import { ManagedProcess } from '../process/managed-process.js';
import { guardDir, releaseDir } from '../process/watchdog.js';
import { StopWaiting, waitFor } from '../wait.js';

/** Where BIND's named is, or why it cannot run here (Debian's bind9 package provides it). */
export function bindUnavailable(): string | undefined {
  const r = spawnSync('named', ['-v'], { encoding: 'utf8' });
  if (r.error) return "BIND 9 (named) is not installed: apt-get install bind9 (the project's .ci/run installs it where it can)";
  return undefined;
}

export interface BindOptions {
  /** The zone it is authoritative for, e.g. example.test. */
  zone: string;
  /** Every name in the zone answers A with this address (ACME HTTP-01 and Pebble's lookups). */
  address?: string;
  /** TSIG algorithm for dynamic updates (BIND's names: hmac-md5, hmac-sha1, hmac-sha256, hmac-sha512). */
  tsigAlgorithm?: 'hmac-md5' | 'hmac-sha1' | 'hmac-sha256' | 'hmac-sha512';
  /**
   * Also serve on port 53 of a loopback address of its own, named by the zone's NS record, as an
   * authoritative server is found in production (NS, then A, then port 53). Needs root; where the
   * port cannot be had, `authoritative` is undefined.
   */
  onPort53?: boolean;
}

export interface Bind {
  /** 127.0.0.1:<port>, UDP and TCP. */
  server: string;
  zone: string;
  tsig: { name: string; algorithm: string; secret: string };
  /** host:53 of the zone's NS record, when started with `onPort53` and that was possible. */
  authoritative?: string;
  /** Records the server added or removed by DNS UPDATE so far (from its log; one per message as opkit sends them). */
  updates(): number;
  /** Queries of `type` for `name` that reached it at `server` (an address of `server` or `authoritative`), from its query log. */
  queries(name: string, type: string, server: string): number;
  stop(): Promise<void>;
}

/**
 * BIND 9, authoritative for one zone on a free loopback port, taking RFC 2136 updates signed with
 * a fresh TSIG key: the real DNS server of an ACME DNS-01 test. Runs as the current user, its
 * files in a private directory.
 */
export async function startBind(options: BindOptions): Promise<Bind> {
  const why = bindUnavailable();
  if (why) throw new Error(why);
  const dir = mkdtempSync(join(tmpdir(), 'opkit-bind-'));
  guardDir(dir);
  const port = await freePort();
  const zone = options.zone.replace(/\.$/, '');
  const algorithm = options.tsigAlgorithm ?? 'hmac-sha256';
  const tsig = { name: 'opkit-acme', algorithm, secret: randomBytes(32).toString('base64') };
  const address = options.address ?? '127.0.0.1';
  // A loopback address of its own, so parallel servers do not compete for port 53. Any 127/8
  // address is local on Linux, but BIND listens only on addresses an interface carries: it is
  // added to lo (and removed at stop).
  const nsAddress = options.onPort53 ? addLoopbackAddress() : undefined;
  writeFileSync(
    join(dir, 'named.conf'),
    `key "${tsig.name}" { algorithm ${algorithm}; secret "${tsig.secret}"; };
options {
  directory "${dir}";
  pid-file "${dir}/named.pid";
  listen-on port ${port} { 127.0.0.1; };
${nsAddress ? `  listen-on port 53 { ${nsAddress}; };\n` : ''}  querylog yes;
  listen-on-v6 { none; };
  recursion no;
  dnssec-validation no;
  notify no;
  allow-query { any; };
};
controls { };
zone "${zone}" {
  type primary;
  file "${dir}/zone.db";
  journal "${dir}/zone.db.jnl";
  update-policy { grant ${tsig.name} zonesub TXT; };
};
`,
  );
  writeFileSync(
    join(dir, 'zone.db'),
    `$TTL 60
@ IN SOA ns1.${zone}. hostmaster.${zone}. ( 1 60 60 3600 60 )
@ IN NS ns1.${zone}.
ns1 IN A ${nsAddress ?? '127.0.0.1'}
@ IN A ${address}
* IN A ${address}
`,
  );
  const check = spawnSync('named-checkconf', ['-z', join(dir, 'named.conf')], { encoding: 'utf8' });
  if (check.status !== 0) throw new Error(`named-checkconf refused the test configuration: ${check.stdout}${check.stderr}`);
  const proc = new ManagedProcess({
    name: 'named',
    command: 'named',
    args: ['-g', '-c', join(dir, 'named.conf'), '-n', '1'],
    logFile: join(dir, 'named.log'),
    cwd: dir,
  });
  proc.start();
  await waitFor(
    'BIND serving its zone',
    () => {
      if (!proc.running) throw new StopWaiting(`named exited: ${proc.recentOutput()}`);
      return /all zones loaded|running$/m.test(proc.recentOutput(40));
    },
    { timeoutMs: 20_000, intervalMs: 100 },
  );
  return {
    server: `127.0.0.1:${port}`,
    zone,
    tsig,
    authoritative: nsAddress && `${nsAddress}:53`,
    updates: () =>
      readFileSync(join(dir, 'named.log'), 'utf8')
        .split('\n')
        .filter((l) => /: updating zone '/.test(l)).length,
    // e.g. "query: _acme-challenge.example.test IN TXT -E(0)K (127.53.7.9)": the last field is the address asked.
    queries: (name, type, server) => {
      const host = server.replace(/:\d+$/, '');
      const want = ` query: ${name.replace(/\.$/, '')} IN ${type} `;
      return readFileSync(join(dir, 'named.log'), 'utf8')
        .split('\n')
        .filter((l) => l.toLowerCase().includes(want.toLowerCase()) && l.trimEnd().endsWith(`(${host})`)).length;
    },
    async stop() {
      await proc.stop(5_000);
      if (nsAddress) spawnSync('ip', ['addr', 'del', `${nsAddress}/32`, 'dev', 'lo'], { stdio: 'ignore' });
      releaseDir(dir);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A fresh 127.53.x.y on lo, or undefined where that is not allowed (not root, no iproute2). */
function addLoopbackAddress(): string | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (let i = 0; i < 5; i++) {
    const [a = 0, b = 0] = randomBytes(2);
    const address = `127.53.${a}.${1 + (b % 254)}`;
    if (spawnSync('ip', ['addr', 'add', `${address}/32`, 'dev', 'lo'], { stdio: 'ignore' }).status === 0) return address;
  }
  return undefined;
}
