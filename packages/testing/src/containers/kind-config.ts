import { versions } from '../assets/binaries.js';
import { K8S_REPOSITORY } from './local-images.js';
import type { MachineQuirks } from './machine.js';

/**
 * The kind cluster configuration for this machine and node image: pure, so each setting is
 * table-tested. With kind's own node image nothing is patched but what the machine needs.
 */
export function kindClusterConfig(opts: { quirks: MachineQuirks; localNodeImage: boolean }): Record<string, unknown> {
  const kubeadmConfigPatches: string[] = [];
  // containerd reads registry hosts from certs.d, where the kind mode writes the local registry's
  // hosts.toml (kind's local-registry guide; a version-2 config, which containerd 2 migrates).
  const containerdConfigPatches: string[] = [['[plugins."io.containerd.grpc.v1.cri".registry]', '  config_path = "/etc/containerd/certs.d"'].join('\n')];
  if (opts.localNodeImage) {
    // The control plane from the images built into the node, under their honest tags.
    kubeadmConfigPatches.push(
      [
        'kind: ClusterConfiguration',
        `imageRepository: ${K8S_REPOSITORY}`,
        'etcd:',
        '  local:',
        `    imageTag: ${versions.etcd}`,
        'dns:',
        `  imageTag: ${versions.coredns}`,
      ].join('\n'),
    );
  }
  if (opts.quirks.cgroupV1) {
    // kubelet >= 1.35 refuses to start on cgroup v1 unless told to (KEP-5573).
    kubeadmConfigPatches.push(['kind: KubeletConfiguration', 'failCgroupV1: false'].join('\n'));
  }
  if (opts.quirks.withheldCapabilities.includes('CAP_SYS_RESOURCE')) {
    // containerd lowers pods' OOM score adjustments, which needs CAP_SYS_RESOURCE.
    containerdConfigPatches.push(['[plugins."io.containerd.grpc.v1.cri"]', '  restrict_oom_score_adj = true'].join('\n'));
  }
  return {
    kind: 'Cluster',
    apiVersion: 'kind.x-k8s.io/v1alpha4',
    nodes: [{ role: 'control-plane' }],
    ...(kubeadmConfigPatches.length ? { kubeadmConfigPatches } : {}),
    containerdConfigPatches,
  };
}
