import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

/**
 * Files read out of an image without running it (a container is created, never started, and
 * removed): path in the image → its text. A path the image does not hold rejects, naming it.
 */
export async function imageFiles(ref: string, paths: string[]): Promise<Record<string, string>> {
  // A command is named for images that have none (a bundle is FROM scratch); it never runs.
  const id = (await docker(['create', ref, 'unused'])).stdout.trim();
  const dir = mkdtempSync(join(tmpdir(), 'opkit-image-files-'));
  try {
    const out: Record<string, string> = {};
    for (const [i, path] of paths.entries()) {
      await docker(['cp', `${id}:${path}`, join(dir, String(i))]);
      out[path] = readFileSync(join(dir, String(i)), 'utf8');
    }
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await docker(['rm', id]);
  }
}
