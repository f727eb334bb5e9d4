// A real npm registry for the test that creates a project outside this repository: verdaccio (from
// npm; 6.8.0, the last release that runs on Node 20), holding opkit's packages as a release would
// publish them and passing every other package through to the registry npm is configured with.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { freePort, waitFor } from '@opkit/testing';

export interface NpmRegistry {
  url: string;
  /** An npm user config naming this registry (and its token) alone: NPM_CONFIG_USERCONFIG for every npm run against it. */
  userconfig: string;
  stop(): Promise<void>;
}

/** verdaccio's configuration: opkit's packages are local only (never fetched from upstream), everything else proxied. */
export function verdaccioConfig(storage: string, upstream: string): string {
  return `storage: ${JSON.stringify(storage)}
auth:
  htpasswd:
    file: ${JSON.stringify(join(storage, 'htpasswd'))}
    max_users: 10
uplinks:
  upstream:
    url: ${JSON.stringify(upstream)}
    timeout: 60s
packages:
  '@opkit/*':
    access: $all
    publish: $authenticated
  '**':
    access: $all
    proxy: upstream
server:
  keepAliveTimeout: 60
log: { type: stdout, format: pretty, level: warn }
`;
}

export async function startNpmRegistry(dir: string): Promise<NpmRegistry> {
  mkdirSync(join(dir, 'storage'), { recursive: true });
  // Upstream is the registry npm uses here (a mirror or a proxy's, if the machine has one).
  const upstream = execFileSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8', cwd: dir }).trim();
  writeFileSync(join(dir, 'config.yaml'), verdaccioConfig(join(dir, 'storage'), upstream));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const bin = join(dirname(createRequire(import.meta.url).resolve('verdaccio/package.json')), 'bin/verdaccio');
  const child: ChildProcess = spawn(process.execPath, [bin, '--config', join(dir, 'config.yaml'), '--listen', `127.0.0.1:${port}`], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout?.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (log += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await waitFor(
      'verdaccio answering',
      async () => {
        if (child.exitCode !== null) throw new Error(`verdaccio exited ${child.exitCode}:\n${log}`);
        return (await fetch(`${url}-/ping`).catch(() => undefined))?.ok;
      },
      { timeoutMs: 60_000 },
    );
    // A user, as `npm adduser` makes one: its token publishes.
    const res = await fetch(`${url}-/user/org.couchdb.user:opkit`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'opkit', password: 'opkit-test-only', type: 'user', roles: [], date: new Date().toISOString() }),
    });
    const { token } = (await res.json()) as { token?: string };
    if (!token) throw new Error(`verdaccio gave no token (${res.status})`);
    const userconfig = join(dir, 'npmrc');
    writeFileSync(userconfig, `registry=${url}\n//127.0.0.1:${port}/:_authToken=${token}\nfund=false\naudit=false\nupdate-notifier=false\n`);
    return {
      url,
      userconfig,
      async stop() {
        child.kill('SIGTERM');
        await exited;
      },
    };
  } catch (e) {
    child.kill('SIGKILL');
    throw e;
  }
}
