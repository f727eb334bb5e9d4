import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { CommandError, type RunOptions, type RunResult } from '../run.js';

/** Progress lines of the container tooling: `[containers] …`, on stdout, never silent for long. */
export const say = (msg: string) => console.log(`[containers] ${msg}`);

export const seconds = (t0: number) => {
  const s = Math.round((Date.now() - t0) / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
};

export interface LongRunOptions extends RunOptions {
  /** Shown in the heartbeat line: `… still <label> (45s)`. */
  label: string;
  /** Every line of output also goes here (a build log). */
  logFile?: string;
  /** Lines matching this are printed as they come (e.g. `Step 3/9`). */
  echo?: RegExp;
}

/**
 * Runs a command that may take minutes (apt, debootstrap, docker build, go build): prints a
 * heartbeat every 15 s, keeps the output for the error, and fails with its last lines.
 */
export function runLong(command: string, args: string[], opts: LongRunOptions): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const child = spawn(command, args, { env: opts.env ?? process.env, cwd: opts.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    const log = opts.logFile ? createWriteStream(opts.logFile, { flags: 'a' }) : undefined;
    let stdout = '';
    let stderr = '';
    let partial = '';
    const onData = (which: 'out' | 'err') => (d: Buffer) => {
      const text = d.toString();
      if (which === 'out') stdout = (stdout + text).slice(-200_000);
      else stderr = (stderr + text).slice(-200_000);
      log?.write(text);
      if (opts.echo) {
        const lines = (partial + text).split('\n');
        partial = lines.pop() ?? '';
        for (const l of lines) if (opts.echo.test(l)) say(`  ${l.trim().slice(0, 110)}${l.trim().length > 110 ? '…' : ''}`);
      }
    };
    child.stdout.on('data', onData('out'));
    child.stderr.on('data', onData('err'));
    const beat = setInterval(() => say(`  … still ${opts.label} (${seconds(t0)})`), 15_000);
    const timer = opts.timeoutMs ? setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs) : undefined;
    const done = () => {
      clearInterval(beat);
      if (timer) clearTimeout(timer);
      log?.end();
    };
    child.on('error', (e) => {
      done();
      reject(e);
    });
    child.on('close', (code) => {
      done();
      const result = { code, stdout, stderr };
      if (code !== 0 && opts.check !== false) reject(new CommandError(`${command.split('/').pop()} ${args.join(' ')}`, result));
      else resolve(result);
    });
    child.stdin.end(opts.input ?? '');
  });
}
