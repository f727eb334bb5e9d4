// The PID-takeover scenario of watchdog.test.ts, run as a program of its own inside a PID
// namespace of its own (unshare --pid --fork --mount-proc): it moves the namespace's PID counter
// (ns_last_pid) to hand a guarded process's PID to a newcomer, which on the machine's own counter
// would make every other process started meanwhile reuse the PIDs of processes that just ended.
// Prints one JSON line: { pid, tookOver, bystanderAlive }.
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { processAlive } from './alive.js';
import { Watchdog } from './watchdog.js';

const NS_LAST_PID = '/proc/sys/kernel/ns_last_pid';
const sleeper = () => spawn('sleep', ['600'], { stdio: 'ignore' });
const exited = (c: ChildProcess) => new Promise<void>((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.once('exit', () => r())));

/** A new process that gets `pid` (tries a few times: another process of the namespace may take it first). */
async function spawnWithPid(pid: number): Promise<ChildProcess | undefined> {
  for (let i = 0; i < 20; i++) {
    writeFileSync(NS_LAST_PID, String(pid - 1));
    const c = sleeper();
    if (c.pid === pid) return c;
    c.kill('SIGKILL');
    await exited(c);
  }
  return undefined;
}

const dog = new Watchdog();
const first = sleeper();
const pid = first.pid!;
dog.guardPid(pid);
first.kill('SIGKILL');
await exited(first);
// Start times are counted in 10 ms clock ticks: a PID forced back at once could start in the tick
// its first owner did and look like the same process (a real wrap takes far longer). A tick passes.
await new Promise((r) => setTimeout(r, 30));
const bystander = await spawnWithPid(pid);
await dog.disconnect();
await new Promise((r) => setTimeout(r, 300));
const result = {
  pid,
  tookOver: bystander?.pid === pid,
  bystanderAlive: !!bystander && bystander.exitCode === null && bystander.signalCode === null && processAlive(pid),
};
bystander?.kill('SIGKILL');
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exit(0);
