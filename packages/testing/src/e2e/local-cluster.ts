import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startControlPlane, type ControlPlane } from '../control-plane/control-plane.js';
import { waitFor } from '../wait.js';
import { freePort } from '../net/ports.js';
import type { E2ECluster } from './cluster.js';
import { startPodRunner, type PodRunner } from './pod-runner.js';
import { localImages, requireBuilt, type WorkspaceApp } from './workspace.js';

export interface LocalClusterOptions {
  /** Simulated nodes (kwok). Default 2. */
  nodes?: number;
  /** The apps whose images the pod runner runs as local processes. */
  apps: WorkspaceApp[];
  audit?: boolean;
}

export interface LocalCluster extends E2ECluster {
  readonly plane: ControlPlane;
  readonly runner: PodRunner;
}

const instance = (release: string) => `app.kubernetes.io/instance=${release}`;

/**
 * The `local` e2e mode: a simulated cluster (etcd, kube-apiserver, controller-manager, scheduler,
 * kwok nodes) with the pod runner standing in for the kubelet of the operators' own pods. Charts
 * install as they would anywhere; the operator in each chart's pod runs from its built bundle,
 * as the chart's ServiceAccount.
 */
export async function startLocalCluster(options: LocalClusterOptions): Promise<LocalCluster> {
  requireBuilt(options.apps);
  // ShardedListAndWatch (alpha in 1.36): a sharded operator's replicas cache only their share.
  const plane = await startControlPlane({ nodes: options.nodes ?? 2, audit: options.audit, apiServerArgs: ['--feature-gates=ShardedListAndWatch=true'] });
  const logDir = join(plane.dir, 'pods');
  mkdirSync(logDir, { recursive: true });
  const runner = startPodRunner(plane.kubeConfig, {
    images: localImages(options.apps),
    logDir,
    // A day-long token: the demo may run that long.
    credentials: async (ns, sa) => (await plane.serviceAccountCredentials(ns, sa, 86_400)).kubeconfigPath,
  });
  const apps = plane.kubeConfig.makeApiClient(AppsV1Api);
  const core = plane.kubeConfig.makeApiClient(CoreV1Api);

  const operatorLogs = async (namespace: string, release: string) => {
    const pods = (await core.listNamespacedPod({ namespace, labelSelector: instance(release) })).items;
    return pods.map((p) => `[${p.metadata?.name}]\n${runner.logs(namespace, p.metadata!.name!)}`).join('\n');
  };
  return {
    mode: 'local',
    plane,
    runner,
    auditEvents: plane.audit && (async () => plane.audit!.query()),
    async killPod(namespace, pod) {
      runner.kill(namespace, pod);
    },
    kubeConfig: plane.kubeConfig,
    images: {},
    kubeconfigPath: plane.kubeconfigPath,
    kubectl: (args, opts) => plane.kubectl(args, opts),
    helm: (args, opts) => plane.helm([...args, '--kubeconfig', plane.kubeconfigPath], opts),
    async chartValues() {
      const port = await freePort();
      return { webhook: { port, url: `https://127.0.0.1:${port}` } };
    },
    async waitOperatorReady(namespace, release, timeoutMs = 90_000) {
      await waitFor(
        `the ${release} operator in ${namespace} to be ready`,
        async () => {
          const deps = (await apps.listNamespacedDeployment({ namespace, labelSelector: instance(release) })).items;
          if (!deps.length) return false;
          for (const d of deps) {
            const want = d.spec?.replicas ?? 1;
            if (d.status?.observedGeneration !== d.metadata?.generation || (d.status?.updatedReplicas ?? 0) !== want || (d.status?.replicas ?? 0) !== want)
              return false;
          }
          const pods = (await core.listNamespacedPod({ namespace, labelSelector: instance(release) })).items.filter((p) => !p.metadata?.deletionTimestamp);
          const running = runner.pods();
          return pods.length > 0 && pods.every((p) => running.some((r) => r.uid === p.metadata?.uid && r.ready));
        },
        { timeoutMs, intervalMs: 250 },
      ).catch(async (err: Error) => {
        throw new Error(`${err.message}\n--- operator logs ---\n${await operatorLogs(namespace, release)}`);
      });
    },
    operatorLogs,
    async operatorOutput(namespace, release) {
      const pods = (await core.listNamespacedPod({ namespace, labelSelector: instance(release) })).items;
      // The runner's own `--- starting/exited` markers are the kubelet's part, not the container's output.
      return pods
        .filter((p) => !p.metadata?.deletionTimestamp)
        .flatMap((p) =>
          runner
            .logs(namespace, p.metadata!.name!, Infinity)
            .split('\n')
            .filter((l) => l && !l.startsWith('--- ')),
        );
    },
    async stop() {
      await runner.stop();
      await plane.stop();
    },
  };
}
