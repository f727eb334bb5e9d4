import { join } from 'node:path';
import { findBinary } from '../assets/binaries.js';
import { ManagedProcess } from '../process/managed-process.js';

/**
 * kube-controller-manager: Deployments get ReplicaSets and Pods, owned objects are
 * garbage-collected, namespaces finish terminating and default ServiceAccounts appear.
 * No serving port (nothing probes it) and no leader election (one per plane).
 */
export function controllerManager(workDir: string, kubeconfig: string, files: { servingCa: string; serviceAccountKey: string }): ManagedProcess {
  return new ManagedProcess({
    name: 'kube-controller-manager',
    command: findBinary('kube-controller-manager'),
    args: [
      `--kubeconfig=${kubeconfig}`,
      '--secure-port=0',
      '--leader-elect=false',
      `--root-ca-file=${files.servingCa}`,
      `--service-account-private-key-file=${files.serviceAccountKey}`,
      // As real clusters do: each controller acts as its own ServiceAccount with its bootstrap role.
      '--use-service-account-credentials=true',
      '--controllers=*',
      // kwok nodes have no kubelet; pods on them should be evicted only if kwok really stops.
      '--node-monitor-grace-period=60s',
      '--concurrent-gc-syncs=10',
      // Its default 20 requests/s would make the simulated cluster, not the operator under test,
      // the bottleneck (a thousand Deployments need three thousand writes of its own).
      '--kube-api-qps=200',
      '--kube-api-burst=400',
    ],
    logFile: join(workDir, 'kube-controller-manager.log'),
  });
}
