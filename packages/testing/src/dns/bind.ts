import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../net/ports.js';
import { ManagedProcess } from '../process/managed-process.js';
import { guardDir, releaseDir } from '../process/watchdog.js';
import { StopWaiting, waitFor } from '../wait.js';

/** Where BIND's named is, or why it cannot run here (Debian's bind9 package provides it). */
export function bindUnavailable(): string | undefined {
  const r = spawnSync('named', ['-v'], { encoding: 'utf8' });
  if (r.error) return 'BIND 9 (named) is not installed: apt-get install bind9 (the project\'s .ci/run installs it where it can)';
  return undefined;
}

export interface BindOptions {
  /** The zone it is authoritative for, e.g. example.test. */
  zone: string;
  /** Every name in the zone answers A with this address (ACME HTTP-01 and Pebble's lookups). */
  address?: string;
  /** TSIG algorithm for dynamic updates (BIND's names: hmac-md5, hmac-sha1, hmac-sha256, hmac-sha512). */
  tsigAlgorithm?: 'hmac-md5' | 'hmac-sha1' | 'hmac-sha256' | 'hmac-sha512';
}

export interface Bind {
  /** 127.0.0.1:<port>, UDP and TCP. */
  server: string;
  zone: string;
  tsig: { name: string; algorithm: string; secret: string };
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
  writeFileSync(
    join(dir, 'named.conf'),
    `key "${tsig.name}" { algorithm ${algorithm}; secret "${tsig.secret}"; };
options {
  directory "${dir}";
  pid-file "${dir}/named.pid";
  listen-on port ${port} { 127.0.0.1; };
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
ns1 IN A 127.0.0.1
@ IN A ${address}
* IN A ${address}
`,
  );
  const check = spawnSync('named-checkconf', ['-z', join(dir, 'named.conf')], { encoding: 'utf8' });
  if (check.status !== 0) throw new Error(`named-checkconf refused the test configuration: ${check.stdout}${check.stderr}`);
  const proc = new ManagedProcess({ name: 'named', command: 'named', args: ['-g', '-c', join(dir, 'named.conf'), '-n', '1'], logFile: join(dir, 'named.log'), cwd: dir });
  proc.start();
  await waitFor('BIND serving its zone', () => {
    if (!proc.running) throw new StopWaiting(`named exited: ${proc.recentOutput()}`);
    return /all zones loaded|running$/m.test(proc.recentOutput(40));
  }, { timeoutMs: 20_000, intervalMs: 100 });
  return {
    server: `127.0.0.1:${port}`,
    zone,
    tsig,
    async stop() {
      await proc.stop(5_000);
      releaseDir(dir);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
