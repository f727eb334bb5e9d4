import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { findBinary } from '../assets/binaries.js';
import { workspaceRoot } from '../e2e/workspace.js';
import { currentImagePlan } from './images.js';
import { kindClusterConfig } from './kind-config.js';
import { ensureKindNodeImage } from './kind-node-image.js';
import type { MachineQuirks } from './machine.js';
import { say } from './progress.js';
import { which } from './which.js';

/** What `kind create cluster` is run with on this machine. */
export interface KindToolset {
  kind: string;
  /** The node image built here, or undefined for kind's own default. */
  nodeImage?: string;
  config: Record<string, unknown>;
}

/** tools/control-plane/ensure-binaries.mjs with these arguments, its progress lines passed through. */
function ensureBinaries(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(workspaceRoot(), 'tools/control-plane/ensure-binaries.mjs'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stdout.on('data', (d: Buffer) => process.stdout.write(d.toString().replace(/^(?=.)/gm, '[containers] ')));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`building the kind toolset failed:${err}`))));
  });
}

/**
 * kind and its node image for this machine: kind's own node image where Docker Hub answers (and
 * any `kind` on PATH), else the node image assembled here from the project's Kubernetes build,
 * with kind built from its Go module at the pinned version. Built once, then cached.
 */
export async function ensureKindToolset(quirks: MachineQuirks): Promise<KindToolset> {
  const local = (await currentImagePlan()).kindNode === 'local';
  let kind: string;
  if (local) {
    await ensureBinaries(['--group', 'kind']);
    kind = findBinary('kind');
  } else {
    const onPath = which('kind');
    if (!onPath) await ensureBinaries(['--only', 'kind']);
    kind = onPath ?? findBinary('kind');
  }
  const nodeImage = local ? await ensureKindNodeImage() : undefined;
  if (nodeImage) say(`kind node image: ${nodeImage}`);
  return { kind, nodeImage, config: kindClusterConfig({ quirks, localNodeImage: local }) };
}
