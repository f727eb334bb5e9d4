import { findBinary } from '../assets/binaries.js';
import { buildToolset } from '../assets/build-toolset.js';
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
  /** The cluster's configuration; with `auditDir`, the API server keeps an audit log there (see kindClusterConfig). */
  config(extra?: Pick<Parameters<typeof kindClusterConfig>[0], 'auditDir' | 'apiServerFeatureGates'>): Record<string, unknown>;
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
    await buildToolset(['--group', 'kind'], '[containers]');
    kind = findBinary('kind');
  } else {
    const onPath = which('kind');
    if (!onPath) await buildToolset(['--only', 'kind'], '[containers]');
    kind = onPath ?? findBinary('kind');
  }
  const nodeImage = local ? await ensureKindNodeImage() : undefined;
  if (nodeImage) say(`kind node image: ${nodeImage}`);
  return { kind, nodeImage, config: (extra = {}) => kindClusterConfig({ quirks, localNodeImage: local, ...extra }) };
}
