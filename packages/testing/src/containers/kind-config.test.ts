import { describe, expect, it } from 'vitest';
import { kindClusterConfig } from './kind-config.js';

describe('kindClusterConfig', () => {
  const plain = { withheldCapabilities: [], cgroupV1: false };
  const thisKindOfVM = { withheldCapabilities: ['CAP_SYS_RESOURCE'], cgroupV1: true };

  const registryHosts = '[plugins."io.containerd.grpc.v1.cri".registry]\n  config_path = "/etc/containerd/certs.d"';

  it("with kind's own node image on an ordinary machine: one control-plane node whose containerd reads registry hosts from certs.d", () => {
    expect(kindClusterConfig({ quirks: plain, localNodeImage: false })).toEqual({
      kind: 'Cluster',
      apiVersion: 'kind.x-k8s.io/v1alpha4',
      nodes: [{ role: 'control-plane' }],
      containerdConfigPatches: [registryHosts],
    });
  });

  it('with the node image built here: kubeadm takes the control plane from opkit.local/k8s at the versions built', () => {
    const c = kindClusterConfig({ quirks: plain, localNodeImage: true }) as { kubeadmConfigPatches: string[] };
    expect(c.kubeadmConfigPatches).toEqual([
      'kind: ClusterConfiguration\nimageRepository: opkit.local/k8s\netcd:\n  local:\n    imageTag: v3.6.16\ndns:\n  imageTag: v1.14.2',
    ]);
  });

  it('on a cgroup v1 VM without CAP_SYS_RESOURCE: kubelet accepts cgroup v1, containerd leaves OOM scores alone', () => {
    const c = kindClusterConfig({ quirks: thisKindOfVM, localNodeImage: false }) as { kubeadmConfigPatches: string[]; containerdConfigPatches: string[] };
    expect(c.kubeadmConfigPatches).toEqual(['kind: KubeletConfiguration\nfailCgroupV1: false']);
    expect(c.containerdConfigPatches).toEqual([registryHosts, '[plugins."io.containerd.grpc.v1.cri"]\n  restrict_oom_score_adj = true']);
  });

  it('with an audit directory and feature gates: the API server gets them through a v1beta4 patch, the node mounts the directory', () => {
    const c = kindClusterConfig({ quirks: plain, localNodeImage: false, auditDir: '/tmp/a', apiServerFeatureGates: ['ShardedListAndWatch'] }) as {
      kubeadmConfigPatches: string[];
      nodes: unknown[];
    };
    expect(c.nodes).toEqual([{ role: 'control-plane', extraMounts: [{ hostPath: '/tmp/a', containerPath: '/etc/opkit-audit' }] }]);
    expect(c.kubeadmConfigPatches).toEqual([
      [
        'apiVersion: kubeadm.k8s.io/v1beta4',
        'kind: ClusterConfiguration',
        'apiServer:',
        '  extraArgs:',
        '    - name: feature-gates',
        '      value: "ShardedListAndWatch=true"',
        '    - name: audit-policy-file',
        '      value: "/etc/opkit-audit/policy.yaml"',
        '    - name: audit-log-path',
        '      value: "/etc/opkit-audit/audit.log"',
        '    - name: audit-log-format',
        '      value: "json"',
        '    - name: audit-log-maxsize',
        '      value: "0"',
        '  extraVolumes:',
        '    - name: opkit-audit',
        '      hostPath: /etc/opkit-audit',
        '      mountPath: /etc/opkit-audit',
        '      pathType: Directory',
      ].join('\n'),
    ]);
  });
});
