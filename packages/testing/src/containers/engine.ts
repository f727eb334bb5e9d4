import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheRoot } from '../assets/binaries.js';
import { goTool } from './go-tools.js';
import { withLock } from './lock.js';
import { describeQuirks, machineQuirks, readMachineFacts, type MachineQuirks } from './machine.js';
import { runLong, say, seconds } from './progress.js';
import { which } from './which.js';
import { processAlive as alive } from '../process/alive.js';
import { processIdentity, sameProcess } from '../process/identity.js';

/** A Docker engine this process can use, or why there is none. */
export type Engine =
  | { available: true; server: string; quirks: MachineQuirks; /** dockerd was started by opkit's tooling */ managed: boolean }
  | { available: false; reason: string };

const containersDir = () => join(cacheRoot(), 'containers');
const stateFile = () => join(containersDir(), 'dockerd.json');

interface EngineState {
  pid: number;
  /** dockerd's start time (see processIdentity): after a reboot or a crash its PID may be another process's. */
  start?: string;
  startedAt: string;
  /** Processes using the engine opkit started; the last one out stops it. */
  users: number[];
}

/** `docker info`'s server version, or undefined when no engine answers. */
export function dockerServerVersion(): string | undefined {
  const r = spawnSync('docker', ['info', '--format', '{{.ServerVersion}}'], { encoding: 'utf8', timeout: 20_000 });
  return r.status === 0 && r.stdout.trim() ? r.stdout.trim() : undefined;
}

/** Why opkit may not install and start an engine here, or undefined when it may. */
export function cannotProvideEngine(): string | undefined {
  if (process.env.OPKIT_CONTAINER_ENGINE === 'none') return 'OPKIT_CONTAINER_ENGINE=none';
  if (process.platform !== 'linux') return `no Docker engine answers, and opkit only starts one on Linux (this is ${process.platform})`;
  if (which('dockerd')) return process.getuid?.() === 0 ? undefined : 'no Docker engine answers, and starting dockerd needs root';
  if (process.getuid?.() !== 0) return "no Docker engine answers, and installing Debian's docker.io needs root";
  if (!which('apt-get')) return 'no Docker engine answers, and this is not a Debian-like system (no apt-get) to install docker.io from';
  return undefined;
}

/** The dockerd opkit started still runs (its PID names the same process). */
const dockerdAlive = (s: EngineState) => sameProcess(s.pid, s.start);

function readState(): EngineState | undefined {
  try {
    return JSON.parse(readFileSync(stateFile(), 'utf8')) as EngineState;
  } catch {
    return undefined;
  }
}

export interface EngineUser {
  /**
   * The process the engine is held for (default: this one). The test driver's helper commands
   * come and go while it runs: they hold it for the driver, and release it for the driver.
   */
  forPid?: number;
}

/**
 * A Docker engine for this run: the one that answers, else Debian's docker.io installed (where
 * this is root on Debian) and dockerd started with the workarounds this machine needs. An engine
 * opkit started is stopped by the last process that asked for it (stopEngine).
 */
export async function ensureEngine(opts: EngineUser = {}): Promise<Engine> {
  const user = opts.forPid ?? process.pid;
  const quirks = machineQuirks(readMachineFacts());
  const server = dockerServerVersion();
  if (server) {
    // Ours from an earlier call (or a run that died): count this process among its users.
    const state = readState();
    if (state && dockerdAlive(state)) {
      await withLock(join(containersDir(), 'engine.lock'), async () => {
        const s = readState();
        if (s) writeFileSync(stateFile(), JSON.stringify({ ...s, users: [...new Set([...s.users.filter(alive), user])] }));
      });
      return { available: true, server, quirks, managed: true };
    }
    return { available: true, server, quirks, managed: false };
  }
  const why = cannotProvideEngine();
  if (why) return { available: false, reason: why };
  return withLock(
    join(containersDir(), 'engine.lock'),
    async () => {
      const again = dockerServerVersion(); // another process may have started it while we waited
      if (!again) await startDockerd(quirks);
      const s = readState();
      if (s) writeFileSync(stateFile(), JSON.stringify({ ...s, users: [...new Set([...s.users.filter(alive), user])] }));
      return { available: true, server: dockerServerVersion() ?? '?', quirks, managed: true };
    },
    (holder) => say(`waiting for process ${holder}, which is starting the Docker engine…`),
  );
}

async function installDockerIo(): Promise<void> {
  const t0 = Date.now();
  say("installing Debian's docker.io (the container engine, about a minute the first time)…");
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const pkgs = ['install', '-y', '-q', '--no-install-recommends', 'docker.io', 'iptables'];
  const r = await runLong('apt-get', pkgs, { label: 'installing docker.io', env, check: false });
  if (r.code !== 0) {
    await runLong('apt-get', ['update', '-q'], { label: 'updating the package lists', env });
    await runLong('apt-get', pkgs, { label: 'installing docker.io', env });
  }
  say(`docker.io installed in ${seconds(t0)}`);
}

/** dockerd's configuration: the shim as default runtime where capabilities are withheld. */
export function daemonConfig(quirks: MachineQuirks, shim: string | undefined, runc: string): Record<string, unknown> {
  if (!quirks.withheldCapabilities.length || !shim) return {};
  return {
    runtimes: { 'opkit-runc': { path: shim, runtimeArgs: [`--opkit-runc=${runc}`, `--opkit-drop-caps=${quirks.withheldCapabilities.join(',')}`] } },
    'default-runtime': 'opkit-runc',
  };
}

async function startDockerd(quirks: MachineQuirks): Promise<void> {
  if (!which('dockerd')) await installDockerIo();
  const dir = containersDir();
  mkdirSync(dir, { recursive: true });
  say(`starting dockerd: ${describeQuirks(quirks)}`);
  const runc = which('runc') ?? '/usr/sbin/runc';
  const shim = quirks.withheldCapabilities.length ? await goTool('runc-shim') : undefined;
  const configFile = join(dir, 'daemon.json');
  writeFileSync(configFile, `${JSON.stringify(daemonConfig(quirks, shim, runc), null, 2)}\n`);
  const logFile = join(dir, 'dockerd.log');
  const out = openSync(logFile, 'a');
  const t0 = Date.now();
  // Detached, in its own session: it outlives this process and is stopped by stopEngine.
  const child = spawn('dockerd', ['--config-file', configFile], { detached: true, stdio: ['ignore', out, out] });
  child.unref();
  writeFileSync(stateFile(), JSON.stringify({ ...processIdentity(child.pid!), startedAt: new Date().toISOString(), users: [] } satisfies EngineState));
  while (!dockerServerVersion()) {
    if (!alive(child.pid!)) {
      rmSync(stateFile(), { force: true });
      const tail = readFileSync(logFile, 'utf8').split('\n').slice(-15).join('\n');
      throw new Error(`dockerd exited while starting; the end of ${logFile}:\n${tail}`);
    }
    if (Date.now() - t0 > 90_000) throw new Error(`dockerd did not answer within 90 s; see ${logFile}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  say(`dockerd ${dockerServerVersion()} ready in ${seconds(t0)} (log: ${logFile})`);
}

/**
 * Who still holds the engine once `user` lets go of it, and whether it should stop: only when no
 * live process holds it. (A process that never held it, such as a test runner's teardown, releases
 * nothing another holds.)
 */
export function release(users: number[], user: number, isAlive: (pid: number) => boolean): { stop: boolean; users: number[] } {
  const left = users.filter((p) => p !== user && isAlive(p));
  return { stop: left.length === 0, users: left };
}

/**
 * This process is done with the engine. If opkit started it and no other live process uses it,
 * dockerd is stopped (its containers with it); an engine opkit did not start is never touched.
 */
export async function stopEngine(opts: EngineUser = {}): Promise<void> {
  const user = opts.forPid ?? process.pid;
  if (!existsSync(stateFile())) return;
  await withLock(join(containersDir(), 'engine.lock'), async () => {
    const s = readState();
    if (!s) return;
    const { stop, users } = release(s.users, user, alive);
    if (!stop && dockerdAlive(s)) {
      writeFileSync(stateFile(), JSON.stringify({ ...s, users }));
      return;
    }
    if (dockerdAlive(s)) {
      say('stopping the dockerd opkit started');
      process.kill(s.pid, 'SIGTERM');
      const t0 = Date.now();
      while (dockerdAlive(s) && Date.now() - t0 < 30_000) await new Promise((r) => setTimeout(r, 250));
      if (dockerdAlive(s)) process.kill(s.pid, 'SIGKILL');
    }
    rmSync(stateFile(), { force: true });
  });
}
