import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { processIdentity, sameProcess, START_TIME_SOURCE } from './identity.js';

// A tiny detached Node process that outlives us: when our IPC channel closes (we exited, crashed,
// or were SIGKILLed by a test runner) it stops every process we registered and removes every
// directory. Without it a killed test run leaves etcd and kube-apiserver running forever.
const WATCHDOG_SOURCE = `
const fs = require('fs');
${START_TIME_SOURCE}
const pids = new Map(), dirs = new Set();
process.on('message', (m) => {
  if (m.pid) (m.remove ? pids.delete(m.pid) : pids.set(m.pid, m.start));
  if (m.dir) (m.remove ? dirs.delete(m.dir) : dirs.add(m.dir));
});
for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(s, () => {});
// Still the process that was registered? (Not merely a live PID: PIDs are reused.)
const same = (p) => { const now = startTime(p); return now !== null && (pids.get(p) === undefined || now === pids.get(p)); };
const signal = (p, sig) => { if (!same(p)) return; try { process.kill(p, sig); } catch {} };
process.on('disconnect', () => {
  for (const p of pids.keys()) signal(p, 'SIGTERM');
  const started = Date.now();
  const tick = setInterval(() => {
    const left = [...pids.keys()].filter(same);
    if (left.length && Date.now() - started < 5000) return;
    for (const p of left) signal(p, 'SIGKILL');
    for (const d of dirs) { try { fs.rmSync(d, { recursive: true, force: true }); } catch {} }
    clearInterval(tick);
    process.exit(0);
  }, 100);
});
`;
/** One watchdog process and what it guards. */
export class Watchdog {
  private child?: ChildProcess;
  private readonly pids = new Map<number, string | undefined>();
  private readonly dirs = new Set<string>();

  private ensure(): ChildProcess {
    if (this.child?.connected) return this.child;
    const child = spawn(process.execPath, ['-e', WATCHDOG_SOURCE], { detached: true, stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
    child.unref();
    child.channel?.unref();
    this.child = child;
    for (const [pid, start] of this.pids) child.send({ pid, start });
    for (const dir of this.dirs) child.send({ dir });
    return child;
  }

  private send(m: object) {
    try {
      this.ensure().send(m);
    } catch {
      /* the watchdog is best effort; the exit hook below still runs */
    }
  }

  guardPid(pid: number): void {
    const { start } = processIdentity(pid);
    this.pids.set(pid, start);
    this.send({ pid, start });
  }

  releasePid(pid: number): void {
    this.pids.delete(pid);
    this.send({ pid, remove: true });
  }

  guardDir(dir: string): void {
    this.dirs.add(dir);
    this.send({ dir });
  }

  releaseDir(dir: string): void {
    this.dirs.delete(dir);
    this.send({ dir, remove: true });
  }

  /** As if this process had died: the watchdog acts on what it holds. Resolves when it has exited. */
  async disconnect(): Promise<void> {
    const child = this.child;
    if (!child?.connected) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.disconnect();
    await exited;
  }

  /** A normal exit without stop(): clean up synchronously, the only kind of work allowed there. */
  cleanUpNow(): void {
    for (const [pid, start] of this.pids) {
      if (!sameProcess(pid, start)) continue;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
    for (const dir of this.dirs) rmSync(dir, { recursive: true, force: true });
  }
}

const watchdog = new Watchdog();

/** Registers a child process to be killed if this process dies without stopping it. */
export const guardPid = (pid: number): void => watchdog.guardPid(pid);
export const releasePid = (pid: number): void => watchdog.releasePid(pid);
/** Registers a temporary directory to be removed if this process dies without removing it. */
export const guardDir = (dir: string): void => watchdog.guardDir(dir);
export const releaseDir = (dir: string): void => watchdog.releaseDir(dir);

process.on('exit', () => watchdog.cleanUpNow());
