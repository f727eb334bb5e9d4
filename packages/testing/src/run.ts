import { spawn } from 'node:child_process';

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  input?: string;
  cwd?: string;
  timeoutMs?: number;
  /** Reject when the command exits non-zero (default true). */
  check?: boolean;
}

export class CommandError extends Error {
  constructor(
    readonly command: string,
    readonly result: RunResult,
  ) {
    super(`${command} exited with ${result.code}: ${(result.stderr || result.stdout).trim().slice(-2000)}`);
    this.name = 'CommandError';
  }
}

/** Runs a command to completion and captures its output. */
export function run(command: string, args: string[], opts: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: opts.env ?? process.env, cwd: opts.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = opts.timeoutMs ? setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs) : undefined;
    child.on('error', reject);
    child.on('close', (code) => {
      if (timer) clearTimeout(timer);
      const result = { code, stdout, stderr };
      if (code !== 0 && opts.check !== false) reject(new CommandError(`${command.split('/').pop()} ${args.join(' ')}`, result));
      else resolve(result);
    });
    // A command that exits without reading its input closes the pipe: EPIPE is no error of ours.
    child.stdin.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') reject(err);
    });
    child.stdin.end(opts.input ?? '');
  });
}
