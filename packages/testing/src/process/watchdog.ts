import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';

// A tiny detached Node process that outlives us: when our IPC channel closes (we exited, crashed,
// or were SIGKILLed by a test runner) it stops every process we registered and removes every
// directory. Without it a killed test run leaves etcd and kube-apiserver running forever.
const WATCHDOG_SOURCE = `
const fs = require('fs');
const pids = new Set(), dirs = new Set();
process.on('message', (m) => {
  if (m.pid) (m.remove ? pids.delete(m.pid) : pids.add(m.pid));
  if (m.dir) (m.remove ? dirs.delete(m.dir) : dirs.add(m.dir));
});
for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(s, () => {});
const alive = (p) => { try { process.kill(p, 0); return true; } catch { return false; } };
process.on('disconnect', () => {
  for (const p of pids) { try { process.kill(p, 'SIGTERM'); } catch {} }
  const started = Date.now();
  const tick = setInterval(() => {
    const left = [...pids].filter(alive);
    if (left.length && Date.now() - started < 5000) return;
    for (const p of left) { try { process.kill(p, 'SIGKILL'); } catch {} }
    for (const d of dirs) { try { fs.rmSync(d, { recursive: true, force: true }); } catch {} }
    clearInterval(tick);
    process.exit(0);
  }, 100);
});
`;

let watchdog: ChildProcess | undefined;
const pids = new Set<number>();
const dirs = new Set<string>();

function ensureWatchdog(): ChildProcess {
  if (watchdog?.connected) return watchdog;
  watchdog = spawn(process.execPath, ['-e', WATCHDOG_SOURCE], { detached: true, stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
  watchdog.unref();
  watchdog.channel?.unref();
  for (const pid of pids) watchdog.send({ pid });
  for (const dir of dirs) watchdog.send({ dir });
  return watchdog;
}

const send = (m: object) => {
  try {
    ensureWatchdog().send(m);
  } catch {
    /* the watchdog is best effort; the exit hook below still runs */
  }
};

/** Registers a child process to be killed if this process dies without stopping it. */
export function guardPid(pid: number): void {
  pids.add(pid);
  send({ pid });
}
export function releasePid(pid: number): void {
  pids.delete(pid);
  send({ pid, remove: true });
}
/** Registers a temporary directory to be removed if this process dies without removing it. */
export function guardDir(dir: string): void {
  dirs.add(dir);
  send({ dir });
}
export function releaseDir(dir: string): void {
  dirs.delete(dir);
  send({ dir, remove: true });
}

// A normal exit without stop(): clean up synchronously, the only kind of work allowed here.
process.on('exit', () => {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
