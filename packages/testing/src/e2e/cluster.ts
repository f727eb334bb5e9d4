import type { AuditEvent } from '../control-plane/audit.js';
import type { KubeConfig } from '@kubernetes/client-node';
import type { PushedImage } from '../containers/push.js';
import type { SigningKey } from '../containers/sign.js';
import type { PublishedChart } from '../helm/publish.js';
import type { RunOptions, RunResult } from '../run.js';
import type { WorkspaceApp } from './workspace.js';

export type E2EModeName = 'local' | 'kind';

/** Images of software the specs run in real containers (kind mode only). */
export type Workload = 'memcached' | 'nginx' | 'traefik' | 'pebble' | 'shell';

/** A cluster the e2e specs run against, whichever mode made it. */
export interface E2ECluster {
  readonly mode: E2EModeName;
  readonly kubeConfig: KubeConfig;
  readonly kubeconfigPath: string;
  /** The image of each workload asked for (kind mode; empty in the local mode, where nothing runs). */
  readonly images: Partial<Record<Workload, string>>;
  /**
   * What the kind mode published to the local registry for this cluster: the apps' images and their
   * charts (pinned to them), all signed with `key`; `signing` is how cosign reaches the registry.
   */
  readonly published?: {
    registry: string;
    images: PushedImage[];
    charts: PublishedChart[];
    key: SigningKey;
    signing: { plainHttp: boolean; home: string };
  };
  kubectl(args: string[], opts?: RunOptions): Promise<RunResult>;
  /**
   * Where `helm install` takes an app's chart from, and the arguments that go with it: in the kind
   * mode the chart published to the local registry, verified (its signature, and its images'
   * pinned digests and signatures; with the install's `values`, every image it renders) and named
   * by digest (`oci://…@sha256:…`); when absent (the local mode), the chart's directory. Rejects,
   * installing nothing, when verification fails.
   */
  chartSource?(app: WorkspaceApp, values?: Record<string, unknown>): Promise<{ chart: string; args: string[] }>;
  /** helm against this cluster, with a private helm home. */
  helm(args: string[], opts?: RunOptions): Promise<RunResult>;
  /**
   * Waits until every current pod of the release serves its readiness probe and the rollout is
   * complete: in kind the kubelet says so; locally the pod runner probes the processes itself
   * (the simulated pods' Ready condition is not evidence of anything).
   */
  waitOperatorReady(namespace: string, release: string, timeoutMs?: number): Promise<void>;
  /**
   * Chart values this cluster needs beyond the user's: locally, the URL the API server calls the
   * operator's webhooks at (its process on this host, not a Service). Fresh for each install.
   */
  chartValues?(): Promise<Record<string, unknown>>;
  /**
   * Every completed request the cluster's API server audited (both modes keep an audit log; a kind
   * cluster reused through $KIND_CLUSTER does not).
   */
  auditEvents?(): Promise<AuditEvent[]>;
  /** SIGKILL to a pod's processes, with no shutdown (the kubelet, or the pod runner, may restart them). */
  killPod?(namespace: string, pod: string): Promise<void>;
  /** The release's operator logs (the last lines), for failure messages. */
  operatorLogs(namespace: string, release: string): Promise<string>;
  /** Every line the release's running (not terminating) operator pods printed (stdout and stderr), unprefixed, as a log shipper reads them. */
  operatorOutput(namespace: string, release: string): Promise<string[]>;
  stop(): Promise<void>;
}

export interface E2EMode {
  name: E2EModeName;
  /** Why this mode does not run here, if it does not. */
  skip?: string;
}
