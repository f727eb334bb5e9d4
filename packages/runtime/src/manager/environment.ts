import { hostname } from 'node:os';

/** `a, b,,c` → `['a', 'b', 'c']`: how both WATCH_NAMESPACE and list flags are read. */
export const commaList = (raw: string): string[] =>
  raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * Everything an operator reads from its environment, read here and nowhere else. The chart sets
 * these through the downward API; outside a pod they are simply absent.
 */
export interface OperatorEnvironment {
  /** WATCH_NAMESPACE as operator-sdk reads it: comma-separated; empty or unset means all namespaces. */
  watchNamespaces: string[];
  /** POD_NAME: the Events' reporting instance and, with POD_UID, the leader identity. */
  podName?: string;
  podUid?: string;
  /** POD_NAMESPACE: the default namespace of the Lease and of cluster-scoped resources' Secrets. */
  podNamespace?: string;
  /** OTEL_EXPORTER_OTLP_ENDPOINT: where spans go (OpenTelemetry's variable); unset, tracing is off. */
  otelEndpoint?: string;
}

export function operatorEnvironment(env: NodeJS.ProcessEnv = process.env): OperatorEnvironment {
  return {
    watchNamespaces: commaList(env.WATCH_NAMESPACE ?? ''),
    podName: env.POD_NAME || undefined,
    podUid: env.POD_UID || undefined,
    podNamespace: env.POD_NAMESPACE || undefined,
    otelEndpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT || undefined,
  };
}

/** The name of this replica for humans (Events): the pod, or the host. */
export const instanceName = (e: OperatorEnvironment): string => e.podName ?? hostname();

export const ENVIRONMENT_HELP = `Environment (set by the chart):
  WATCH_NAMESPACE     comma-separated namespaces to watch (empty: all)
  POD_NAME, POD_UID   this replica's identity (leader election, Events)
  POD_NAMESPACE       default namespace of the leader Lease`;
