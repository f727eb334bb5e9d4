import { workspaceRoot } from '@opkit/testing';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Builds a comparator under bench/compare/<dir> (a Go module of its own), once per source and
 * go.sum, into opkit's cache (like the control-plane binaries), with a progress line.
 */
export function buildGoComparator(dir: string, what: string): string {
  const src = join(workspaceRoot(), 'bench/compare', dir);
  const hash = createHash('sha256').update(readFileSync(join(src, 'main.go'))).update(readFileSync(join(src, 'go.sum'))).digest('hex').slice(0, 12);
  const bin = join(process.env.OPKIT_CACHE_DIR ?? join(homedir(), '.cache/opkit'), 'bench', `${dir}-${hash}`);
  if (existsSync(bin)) return bin;
  mkdirSync(join(bin, '..'), { recursive: true });
  console.log(`building ${what} from its Go module, once (a few minutes on 2 cores)…`);
  const t0 = Date.now();
  const r = spawnSync('go', ['build', '-trimpath', '-o', bin, '.'], { cwd: src, stdio: 'inherit', env: { ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local', CGO_ENABLED: '0' } });
  if (r.status !== 0) throw new Error(`go build of ${what} failed`);
  console.log(`built in ${Math.round((Date.now() - t0) / 1000)} s`);
  return bin;
}

export const cpuSeconds = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100; // utime + stime, in clock ticks of 10 ms
};

/**
 * CPU seconds used so far by this process's descendants whose command is one of `names` (the
 * control plane's kube-apiserver and etcd): what the API server spent serving a run.
 */
export const descendantCpuSeconds = (names: string[]) => {
  const parent = new Map<number, number>();
  const comm = new Map<number, string>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      comm.set(Number(d), stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')));
      parent.set(Number(d), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const descends = (pid: number) => {
    for (let p = parent.get(pid); p && p > 1; p = parent.get(p)) if (p === process.pid) return true;
    return false;
  };
  let total = 0;
  for (const [pid, name] of comm) {
    if (!names.includes(name) || !descends(pid)) continue;
    try {
      total += cpuSeconds(pid);
    } catch {
      // gone meanwhile
    }
  }
  return total;
};

export const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
