import * as fs from 'node:fs';

/**
 * When a process started, in clock ticks since boot (field 22 of /proc/<pid>/stat), as a string;
 * with its PID it names one process for the machine's uptime, where a PID alone is reused as soon
 * as the kernel wraps around pid_max. `null`: no such process. `undefined`: this system has no
 * /proc (then a live PID is all there is to go on). Plain JavaScript: the watchdog runs it too.
 */
export const START_TIME_SOURCE = `
function startTime(pid) {
  let stat;
  try { stat = require('fs').readFileSync('/proc/' + pid + '/stat', 'utf8'); }
  catch (e) {
    if (e.code !== 'ENOENT' || !require('fs').existsSync('/proc/self/stat')) { try { process.kill(pid, 0); return undefined; } catch (k) { return k.code === 'EPERM' ? undefined : null; } }
    return null;
  }
  // "pid (comm) state ppid …": comm may hold spaces and parentheses, so count from the last ')'.
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
}
`;
// The same source the watchdog runs; all it requires is fs.
const onlyFs = (id: string) => {
  if (id !== 'fs') throw new Error(`startTime requires only fs, not ${id}`);
  return fs;
};
const startTime = new Function('require', 'process', `${START_TIME_SOURCE}; return startTime;`)(onlyFs, process) as (pid: number) => string | null | undefined;

/** Whether `pid` still names the process that had `start` (see startTime); no start known: whether it lives. */
export function sameProcess(pid: number, start: string | null | undefined): boolean {
  const now = startTime(pid);
  return now !== null && (start === undefined || start === null || now === start);
}

/** The identity to register a process under: its PID and its start time. */
export const processIdentity = (pid: number): { pid: number; start?: string } => ({ pid, start: startTime(pid) ?? undefined });
