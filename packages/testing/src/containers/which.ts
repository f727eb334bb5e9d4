import { spawnSync } from 'node:child_process';

/** The path of a command on PATH (as the shell finds it), or undefined. */
export function which(cmd: string): string | undefined {
  const r = spawnSync('/bin/sh', ['-c', 'command -v "$1"', 'sh', cmd], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.trim() ? r.stdout.trim() : undefined;
}
