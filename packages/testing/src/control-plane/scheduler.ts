import { join } from 'node:path';
import { findBinary } from '../assets/binaries.js';
import { freePort } from '../net/ports.js';
import { ManagedProcess } from '../process/managed-process.js';

/** kube-scheduler binds pods to the kwok nodes; kwok itself never schedules. */
export async function scheduler(workDir: string, kubeconfig: string): Promise<ManagedProcess> {
  return new ManagedProcess({
    name: 'kube-scheduler',
    command: findBinary('kube-scheduler'),
    args: [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${await freePort()}`,
      '--leader-elect=false',
      // As the controller manager: the simulated cluster should not be what a benchmark measures.
      '--kube-api-qps=200',
      '--kube-api-burst=400',
    ],
    logFile: join(workDir, 'kube-scheduler.log'),
  });
}
