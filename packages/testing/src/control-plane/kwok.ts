import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findBinary } from '../assets/binaries.js';
import { freePort } from '../net/ports.js';
import { ManagedProcess } from '../process/managed-process.js';
import { KWOK_STAGES } from './kwok-stages.js';

export const KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node';

/**
 * kwok plays the kubelet for nodes annotated `kwok.x-k8s.io/node=fake`: it keeps them Ready and
 * moves pods bound to them to Running (no container really runs).
 */
export async function kwok(workDir: string, kubeconfig: string): Promise<ManagedProcess> {
  // An explicit config, so a developer's ~/.kwok/kwok.yaml cannot change test behaviour.
  const config = join(workDir, 'kwok.yaml');
  writeFileSync(config, KWOK_STAGES);
  return new ManagedProcess({
    name: 'kwok',
    command: findBinary('kwok'),
    args: [
      `--kubeconfig=${kubeconfig}`,
      `--config=${config}`,
      '--manage-all-nodes=false',
      `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION}=fake`,
      '--cidr=10.244.0.0/16',
      '--node-ip=10.0.0.2',
      `--server-address=127.0.0.1:${await freePort()}`,
      '--node-lease-duration-seconds=40',
    ],
    logFile: join(workDir, 'kwok.log'),
  });
}

/** A Node object kwok will manage; no taint, so ordinary pods schedule onto it. */
export function kwokNode(name: string) {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { [KWOK_NODE_ANNOTATION]: 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
      labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', type: 'kwok' },
    },
    status: {
      allocatable: { cpu: '32', memory: '256Gi', pods: '110' },
      capacity: { cpu: '32', memory: '256Gi', pods: '110' },
      nodeInfo: { architecture: 'amd64', operatingSystem: 'linux', kubeletVersion: 'fake', kubeProxyVersion: 'fake' },
    },
  };
}
