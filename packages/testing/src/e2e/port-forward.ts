import { spawn } from 'node:child_process';
import { findBinary } from '../assets/binaries.js';
import type { E2ECluster } from './cluster.js';

export interface PortForward {
  /** The port on 127.0.0.1 that reaches the target. */
  port: number;
  stop(): void;
}

/**
 * `kubectl port-forward` to a Service or pod of the cluster (kind mode: a ClusterIP is not
 * reachable from this host), on a free local port. Resolves once kubectl says it forwards;
 * rejects with what it printed when it exits first or says nothing within `timeoutMs`.
 */
export function portForward(cluster: E2ECluster, namespace: string, target: string, remotePort: number, timeoutMs = 30_000): Promise<PortForward> {
  const child = spawn(findBinary('kubectl'), [`--kubeconfig=${cluster.kubeconfigPath}`, 'port-forward', '-n', namespace, target, `:${remotePort}`], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let said = '';
  return new Promise<PortForward>((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      child.kill();
      reject(new Error(`kubectl port-forward ${namespace}/${target} :${remotePort}: ${why}${said ? `\n${said}` : ''}`));
    };
    const timer = setTimeout(() => fail(`nothing forwarded after ${timeoutMs / 1000}s`), timeoutMs);
    const hear = (chunk: Buffer) => {
      said += chunk.toString();
      const m = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(said);
      if (!m) return;
      clearTimeout(timer);
      child.off('exit', exited);
      resolve({ port: Number(m[1]), stop: () => void child.kill() });
    };
    const exited = (code: number | null) => fail(`exited (${code ?? 'signal'}) before forwarding`);
    child.stdout.on('data', hear);
    child.stderr.on('data', (c: Buffer) => (said += c.toString()));
    child.on('exit', exited);
  });
}
