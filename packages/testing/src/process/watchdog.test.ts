import { build } from 'esbuild';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { processAlive } from './alive.js';
import { Watchdog } from './watchdog.js';

const sleeper = () => spawn('sleep', ['600'], { stdio: 'ignore' });
const exited = (c: ChildProcess) => new Promise<void>((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.once('exit', () => r())));

/**
 * The kernel hands out PIDs in order and wraps at pid_max (32,768 on many machines; a cold build of
 * the control plane spawns tens of thousands of compilers). Writing ns_last_pid makes the next PID
 * the one we want (root only; CRIU restores processes this way). It is done inside a PID namespace
 * of the scenario's own: moved on the machine's counter, every process the other test workers
 * started meanwhile would get the PID of one that had just ended, and any holder of a stale PID
 * anywhere (a test tool, a task runner) would signal a stranger at once.
 */
const canChoosePids = (() => {
  if (process.getuid?.() !== 0) return false;
  return spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status === 0;
})();

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
  // process ended on its own) may by then name another process.
  it.runIf(canChoosePids)(
    'never signals a process that took over the PID of one it guarded',
    async () => {
      // Bundled next to the package so its imports resolve; run in a PID namespace of its own.
      const bundle = join(import.meta.dirname, `../../test-output/pid-takeover-${process.pid}.mjs`);
      await build({
        entryPoints: [join(import.meta.dirname, 'pid-takeover.scenario.ts')],
        bundle: true,
        platform: 'node',
        format: 'esm',
        outfile: bundle,
        packages: 'external',
        logLevel: 'error',
      });
      const r = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', process.execPath, bundle], { encoding: 'utf8', timeout: 60_000 });
      expect(r.status, r.stderr).toBe(0);
      const result = JSON.parse(r.stdout.trim().split('\n').pop()!) as { pid: number; tookOver: boolean; bystanderAlive: boolean };
      expect(result.tookOver).toBe(true);
      expect(result.bystanderAlive).toBe(true);
    },
    90_000,
  );
});
