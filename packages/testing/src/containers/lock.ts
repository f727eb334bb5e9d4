import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { processIdentity, sameProcess } from '../process/identity.js';

/**
 * Runs `fn` holding a machine-wide lock (a directory, atomic to create), so two test processes
 * never build the same cached image or start dockerd twice. A lock whose holder died is taken
 * over. `onWait` is told once when another process holds it.
 */
export async function withLock<T>(path: string, fn: () => Promise<T>, onWait?: (holder: number) => void): Promise<T> {
  mkdirSync(dirname(path), { recursive: true });
  let told = false;
  for (;;) {
    try {
      mkdirSync(path);
      const me = processIdentity(process.pid);
      writeFileSync(join(path, 'pid'), `${me.pid} ${me.start ?? ''}`.trim());
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      let holder = NaN;
      let start: string | undefined;
      try {
        const [pid, s] = readFileSync(join(path, 'pid'), 'utf8').trim().split(' ');
        holder = Number(pid);
        start = s;
      } catch {
        /* being created or removed right now */
      }
      // Its holder died (a PID alone could since name another process: the start time tells).
      if (Number.isFinite(holder) && holder > 0 && !sameProcess(holder, start)) {
        rmSync(path, { recursive: true, force: true });
        continue;
      }
      if (!told && Number.isFinite(holder)) {
        told = true;
        onWait?.(holder);
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(path, { recursive: true, force: true });
  }
}
