import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { processAlive } from './alive.js';
import { Watchdog } from './watchdog.js';

const sleeper = () => spawn('sleep', ['600'], { stdio: 'ignore' });
const exited = (c: ChildProcess) => new Promise<void>((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.once('exit', () => r())));

/**
 * The kernel hands out PIDs in order and wraps at pid_max (32,768 on many machines; a cold build of
 * the control plane spawns tens of thousands of compilers). Writing ns_last_pid makes the next PID
 * the one we want, which needs root on Linux: CRIU restores processes this way.
 */
const NS_LAST_PID = '/proc/sys/kernel/ns_last_pid';
const canChoosePids = (() => {
  try {
    accessSync(NS_LAST_PID, constants.W_OK);
    return true;
  } catch {
    return false;
  }
})();

/** A new process that gets `pid` (tries a few times: another process may take it first). */
async function spawnWithPid(pid: number): Promise<ChildProcess> {
  for (let i = 0; i < 20; i++) {
    writeFileSync(NS_LAST_PID, String(pid - 1));
    const c = sleeper();
    if (c.pid === pid) return c;
    c.kill('SIGKILL');
    await exited(c);
  }
  throw new Error(`could not get PID ${pid} again`);
}

describe('the watchdog', () => {
  const spawned: ChildProcess[] = [];
  afterEach(() => {
    for (const c of spawned.splice(0)) c.kill('SIGKILL');
  });

  it('stops what it guards when the process that registered it goes away', async () => {
    const dog = new Watchdog();
    const guarded = sleeper();
    spawned.push(guarded);
    dog.guardPid(guarded.pid!);
    await dog.disconnect();
    await exited(guarded);
    expect(processAlive(guarded.pid!)).toBe(false);
  });

  // A PID the watchdog still holds when its test worker ends (the release never reached it, or the
  // process ended on its own) may by then name another test's process: the API server of a suite
  // in another worker got a SIGTERM this way on a fresh machine.
  it.runIf(canChoosePids)('never signals a process that took over the PID of one it guarded', async () => {
    const dog = new Watchdog();
    const first = sleeper();
    spawned.push(first);
    const pid = first.pid!;
    dog.guardPid(pid);
    first.kill('SIGKILL');
    await exited(first);
    // A PID comes back only after the kernel has handed out all the others (pid_max, 32,768 here),
    // never within the 10 ms clock tick start times are counted in; forced back at once, it could
    // start in the tick its first owner did and look like the same process. So a tick passes first.
    await new Promise((r) => setTimeout(r, 30));
    const bystander = await spawnWithPid(pid);
    spawned.push(bystander);
    await dog.disconnect();
    await new Promise((r) => setTimeout(r, 300));
    expect(bystander.exitCode ?? bystander.signalCode).toBe(null);
    expect(processAlive(pid)).toBe(true);
  });
});
