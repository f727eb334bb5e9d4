import { accessSync, constants } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import versions from './versions.json' with { type: 'json' };

export { versions };

/** The binaries of the toolset, by the names envtest and the upstream projects give them. */
export type BinaryName =
  | 'etcd'
  | 'etcdctl'
  | 'kube-apiserver'
  | 'kube-controller-manager'
  | 'kube-scheduler'
  | 'kubectl'
  | 'kwok'
  | 'helm'
  | 'helm-docs'
  | 'pebble'
  | 'pebble-challtestsrv'
  // The kind group (ensure-binaries --group kind).
  | 'kubelet'
  | 'kubeadm'
  | 'kube-proxy'
  | 'kind'
  | 'coredns'
  | 'traefik'
  | 'registry'
  | 'cosign'
  | 'syft'
  // The comparators group (ensure-binaries --group comparators).
  | 'cert-manager-controller'
  | 'cert-manager-dns-webhook'
  | 'cmctl'
  | 'aws-privateca-issuer';

/** opkit's cache on this machine: $OPKIT_CACHE_DIR, else $XDG_CACHE_HOME/opkit or ~/.cache/opkit. */
export function cacheRoot(): string {
  return process.env.OPKIT_CACHE_DIR || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'opkit');
}

/** Where tools/control-plane/ensure-binaries.mjs puts what it builds. */
export function defaultAssetsDir(): string {
  return join(cacheRoot(), 'k8s', versions.kubernetes);
}

export class BinaryNotFoundError extends Error {
  constructor(
    readonly binary: BinaryName,
    readonly searched: string[],
  ) {
    super(
      `${binary} not found (looked in ${searched.join(', ')}). ` +
        `Build the control-plane toolset once with \`npm run setup:binaries\` (needs Go >= ${versions.go} and the Go module proxy), ` +
        `or set KUBEBUILDER_ASSETS to a directory holding ${binary}.`,
    );
    this.name = 'BinaryNotFoundError';
  }
}

const executable = (path: string) => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/**
 * Resolves a binary the way envtest does, so existing setups keep working:
 * TEST_ASSET_<NAME>, then $KUBEBUILDER_ASSETS/<name> (used as is), then our versioned cache.
 */
export function findBinary(name: BinaryName): string {
  const searched: string[] = [];
  const envName = `TEST_ASSET_${name.toUpperCase().replace(/-/g, '_')}`;
  const candidates = [process.env[envName], process.env.KUBEBUILDER_ASSETS && join(process.env.KUBEBUILDER_ASSETS, name), join(defaultAssetsDir(), name)];
  for (const c of candidates) {
    if (!c) continue;
    searched.push(c);
    if (executable(c)) return c;
  }
  throw new BinaryNotFoundError(name, searched);
}
