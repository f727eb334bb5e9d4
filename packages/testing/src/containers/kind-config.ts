import { versions } from '../assets/binaries.js';
import { K8S_REPOSITORY } from './local-images.js';
import type { MachineQuirks } from './machine.js';

/**
 * The kind cluster configuration for this machine and node image: pure, so each setting is
 * table-tested. With kind's own node image nothing is patched but what the machine needs.
 */
/** Where the node keeps the audit policy and log: a directory of the host, mounted (`auditDir`). */
export const KIND_AUDIT_DIR = '/etc/opkit-audit';

export function kindClusterConfig(opts: {
  quirks: MachineQuirks;
  localNodeImage: boolean;
  /**
   * A host directory holding `policy.yaml`: the API server keeps its audit log there (`audit.log`),
   * as the local mode's does, so specs can see who wrote what.
   */
  auditDir?: string;
  /** kube-apiserver feature gates, e.g. `ShardedListAndWatch` (alpha in 1.36). */
  apiServerFeatureGates?: string[];
}): Record<string, unknown> {
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
  const extraArgs: { name: string; value: string }[] = [];
  if (opts.apiServerFeatureGates?.length) extraArgs.push({ name: 'feature-gates', value: opts.apiServerFeatureGates.map((g) => `${g}=true`).join(',') });
  if (opts.auditDir)
    extraArgs.push(
      { name: 'audit-policy-file', value: `${KIND_AUDIT_DIR}/policy.yaml` },
      { name: 'audit-log-path', value: `${KIND_AUDIT_DIR}/audit.log` },
      { name: 'audit-log-format', value: 'json' },
      { name: 'audit-log-maxsize', value: '0' },
    );
  if (extraArgs.length) {
    // v1beta4 (Kubernetes 1.36's kubeadm): extraArgs a list, which kind merges with its own.
    const lines = ['apiVersion: kubeadm.k8s.io/v1beta4', 'kind: ClusterConfiguration', 'apiServer:', '  extraArgs:'];
    for (const a of extraArgs) lines.push(`    - name: ${a.name}`, `      value: "${a.value}"`);
    if (opts.auditDir)
      lines.push(
        '  extraVolumes:',
        '    - name: opkit-audit',
        `      hostPath: ${KIND_AUDIT_DIR}`,
        `      mountPath: ${KIND_AUDIT_DIR}`,
        '      pathType: Directory',
      );
    kubeadmConfigPatches.push(lines.join('\n'));
  }
  return {
    kind: 'Cluster',
    apiVersion: 'kind.x-k8s.io/v1alpha4',
    nodes: [{ role: 'control-plane', ...(opts.auditDir ? { extraMounts: [{ hostPath: opts.auditDir, containerPath: KIND_AUDIT_DIR }] } : {}) }],
    ...(kubeadmConfigPatches.length ? { kubeadmConfigPatches } : {}),
    containerdConfigPatches,
  };
}
