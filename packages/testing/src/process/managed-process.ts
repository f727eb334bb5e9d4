import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { guardPid, releasePid } from './watchdog.js';

export interface ManagedProcessOptions {
  name: string;
  command: string;
  args: string[];
  /** Where stdout and stderr go; the last lines are also kept for error messages. */
  logFile: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** A child process of the control plane: logged to a file, guarded by the watchdog, stoppable. */
export class ManagedProcess {
  private child?: ChildProcess;
  private log?: WriteStream;
  private tail: string[] = [];
  private exitPromise?: Promise<number | null>;
  exitCode: number | null | undefined;

  constructor(readonly options: ManagedProcessOptions) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return !!this.child && this.exitCode === undefined;
  }

  start(): void {
    if (this.running) throw new Error(`${this.options.name} is already running`);
    this.exitCode = undefined;
    this.log = createWriteStream(this.options.logFile, { flags: 'a' });
    const child = spawn(this.options.command, this.options.args, {
      cwd: this.options.cwd,
      env: this.options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    if (child.pid) guardPid(child.pid);
    const log = this.log;
    // A write error (a full disk) costs the log, never the process holding it.
    log.on('error', () => undefined);
    const onData = (buf: Buffer) => {
      log.write(buf);
      const lines = buf.toString().split('\n').filter(Boolean);
      this.tail.push(...lines);
      if (this.tail.length > 40) this.tail.splice(0, this.tail.length - 40);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    this.exitPromise = new Promise((resolve) => {
      child.on('error', (err) => {
        this.tail.push(String(err));
        this.exitCode = -1;
        resolve(-1);
      });
      child.on('exit', (code, signal) => {
        if (child.pid) releasePid(child.pid);
        this.exitCode = code ?? (signal ? 128 : null);
        resolve(this.exitCode);
      });
      // Output can outlive the process: 'exit' comes before its pipes drain, and anything it left
      // running may still hold them. The log ends when both pipes close.
      child.on('close', () => log.end());
    });
  }

  /** The last lines the process printed, to explain a failure. */
  recentOutput(lines = 20): string {
    return this.tail.slice(-lines).join('\n');
  }

  /** SIGTERM, then SIGKILL after the grace period. Resolves once the process is gone. */
  async stop(graceMs = 10_000): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await this.exitPromise;
    clearTimeout(timer);
  }

  /** Resolves with the exit code when the process ends. */
  exited(): Promise<number | null> {
    return this.exitPromise ?? Promise.resolve(null);
  }
}
