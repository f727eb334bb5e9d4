import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { processAlive as alive } from '../process/alive.js';


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
      writeFileSync(join(path, 'pid'), String(process.pid));
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      let holder = NaN;
      try {
        holder = Number(readFileSync(join(path, 'pid'), 'utf8'));
      } catch {
        /* being created or removed right now */
      }
      if (Number.isFinite(holder) && holder > 0 && !alive(holder)) {
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
