import { randomBytes } from 'node:crypto';
import { StopWaiting, waitFor } from '../wait.js';
import type { E2ECluster } from './cluster.js';

export interface InClusterRun {
  /** What the script printed (stdout and stderr, as `kubectl logs` has them). */
  output: string;
  exitCode: number;
}

/**
 * Runs a bash script in a pod of the cluster (kind mode: a real container, on the pod network, with
 * the cluster's DNS), waits for it to end and returns its output. The pod is deleted afterwards.
 * For clients the specs need inside the cluster: memcached's text protocol, HTTP through Services.
 */
export async function runInCluster(
  cluster: E2ECluster,
  opts: { namespace: string; script: string; image?: string; timeoutMs?: number },
): Promise<InClusterRun> {
  const image = opts.image ?? cluster.images.shell;
  if (!image) throw new Error("runInCluster needs the `shell` workload image (startE2ECluster(..., { workloads: ['shell'] }))");
  const name = `e2e-client-${randomBytes(3).toString('hex')}`;
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: opts.namespace, labels: { 'app.kubernetes.io/name': 'e2e-client' } },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      securityContext: { runAsNonRoot: true, runAsUser: 65534, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: 'client',
          image,
          imagePullPolicy: 'IfNotPresent',
          command: ['bash', '-c', opts.script],
          securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
        },
      ],
    },
  };
  await cluster.kubectl(['apply', '-f', '-'], { input: JSON.stringify(pod) });
  try {
    const phase = await waitFor(
      `in-cluster client ${name} to finish`,
      async () => {
        const p = JSON.parse((await cluster.kubectl(['get', 'pod', name, '-n', opts.namespace, '-o', 'json'])).stdout) as {
          status?: { phase?: string; containerStatuses?: { state?: { waiting?: { reason?: string; message?: string }; terminated?: { exitCode: number } } }[] };
        };
        const waiting = p.status?.containerStatuses?.[0]?.state?.waiting;
        if (waiting?.reason && /ErrImage|ImagePull|CreateContainer/.test(waiting.reason))
          throw new StopWaiting(`${name}: ${waiting.reason}: ${waiting.message ?? ''}`);
        return (p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') && p.status;
      },
      { timeoutMs: opts.timeoutMs ?? 120_000, intervalMs: 500 },
    );
    const output = (await cluster.kubectl(['logs', name, '-n', opts.namespace], { check: false })).stdout;
    return { output, exitCode: phase.containerStatuses?.[0]?.state?.terminated?.exitCode ?? -1 };
  } finally {
    await cluster.kubectl(['delete', 'pod', name, '-n', opts.namespace, '--wait=false'], { check: false });
  }
}
