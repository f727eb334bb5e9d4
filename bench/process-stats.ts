// What the benches read about a process from /proc: its CPU time, its memory, and the CPU of the
// control plane's processes it started. One reader for all of them.
import { preloaded } from '@opkit/testing';
import { readdirSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';

/** The fields of /proc/<pid>/stat after the command (which may contain spaces). */
const statFields = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return { comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), fields: stat.slice(stat.lastIndexOf(')') + 2).split(' ') };
};

/** CPU seconds a process has used so far (user + system; clock ticks of 10 ms). */
export const cpuSeconds = (pid: number) => {
  const { fields } = statFields(pid);
  return (Number(fields[11]) + Number(fields[12])) / 100;
};

/**
 * A process's resident memory in bytes: all of it (VmRSS), its own (RssAnon) and mapped files such
 * as the node binary (RssFile), which a container's working set counts too.
 */
export const processMemory = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const bytes = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)![1]) * 1024;
  return { rss: bytes('VmRSS'), anon: bytes('RssAnon'), file: bytes('RssFile') };
};

/**
 * The pids of this process's descendants whose command is one of `names` (the control plane's
 * kube-apiserver and etcd that a bench started): not any process of that name on the machine,
 * where tests may be running control planes of their own beside it.
 */
export const descendantPids = (names: string[]): number[] => {
  const parent = new Map<number, number>();
  const comm = new Map<number, string>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const s = statFields(Number(d));
      comm.set(Number(d), s.comm);
      parent.set(Number(d), Number(s.fields[1]));
    } catch {
      // gone meanwhile
    }
  }
  const descends = (pid: number) => {
    for (let p = parent.get(pid); p && p > 1; p = parent.get(p)) if (p === process.pid) return true;
    return false;
  };
  return [...comm].filter(([pid, name]) => names.includes(name) && descends(pid)).map(([pid]) => pid);
};

/** CPU seconds used so far by this process's descendants named one of `names`: what the API server spent serving a run. */
export const descendantCpuSeconds = (names: string[]) => {
  let total = 0;
  for (const pid of descendantPids(names)) {
    try {
      total += cpuSeconds(pid);
    } catch {
      // gone meanwhile
    }
  }
  return total;
};

/** The median (the mean of the middle two for an even count: of two runs, not the worse one); NaN for no values. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (!s.length) return NaN;
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Which malloc an operator ran on, from its environment: the preloaded allocator with its settings, or glibc's. */
export const allocatorOf = (env: Record<string, string | undefined>): string => {
  const libs = preloaded(env);
  if (!libs.length) return "allocator glibc's malloc";
  return `allocator ${libs.map((p) => basename(p)).join(', ')} (LD_PRELOAD${env.MALLOC_CONF ? `, MALLOC_CONF=${env.MALLOC_CONF}` : ''})`;
};
