import { spawnSync } from 'node:child_process';
import { run, type RunOptions } from '../run.js';

/** docker (the client on PATH) with output captured; rejects on failure. */
export const docker = (args: string[], opts: RunOptions = {}) => run('docker', args, { timeoutMs: 30 * 60_000, ...opts });

/** The image's ID, or undefined when this engine does not have it. */
export function imageId(ref: string): string | undefined {
  const r = spawnSync('docker', ['image', 'inspect', '--format', '{{.Id}}', ref], { encoding: 'utf8', timeout: 30_000 });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/** The image's size in bytes, as `docker image inspect` reports it. */
export function imageSize(ref: string): number | undefined {
  const r = spawnSync('docker', ['image', 'inspect', '--format', '{{.Size}}', ref], { encoding: 'utf8', timeout: 30_000 });
  return r.status === 0 ? Number(r.stdout.trim()) : undefined;
}
