import { parseArgs, type ParseArgsConfig } from 'node:util';

/** The flags every kubebuilder/controller-runtime operator accepts, with the same names. */
export interface ManagerFlags {
  metricsBindAddress: string;
  healthProbeBindAddress: string;
  leaderElect: boolean;
  leaderElectionNamespace?: string;
  leaderElectionId?: string;
  kubeconfig?: string;
  logLevel: string;
  logFormat: 'json' | 'pretty';
}

export const MANAGER_FLAG_HELP = `
  --metrics-bind-address <addr>          where /metrics is served (default :8080; 0 disables)
  --health-probe-bind-address <addr>     where /healthz and /readyz are served (default :8081; 0 disables)
  --leader-elect                         run leader election so only one replica reconciles
  --leader-election-namespace <ns>       the Lease's namespace (default: POD_NAMESPACE or the kubeconfig's)
  --leader-election-id <name>            the Lease's name (default: <operator>-leader)
  --kubeconfig <path>                    kubeconfig to use (default: KUBECONFIG, in-cluster, ~/.kube/config)
  --log-level <level>                    trace, debug, info, warn, error (default info)
  --log-format <json|pretty>             json lines (default) or human-readable
Environment: WATCH_NAMESPACE (comma-separated namespaces to watch; empty = all)`;

const options = {
  'metrics-bind-address': { type: 'string', default: ':8080' },
  'health-probe-bind-address': { type: 'string', default: ':8081' },
  'leader-elect': { type: 'boolean', default: false },
  'leader-election-namespace': { type: 'string' },
  'leader-election-id': { type: 'string' },
  kubeconfig: { type: 'string' },
  'log-level': { type: 'string', default: 'info' },
  'log-format': { type: 'string', default: 'json' },
  help: { type: 'boolean', short: 'h', default: false },
} satisfies ParseArgsConfig['options'];

export class FlagError extends Error {
  override name = 'FlagError';
}

/**
 * Parses the standard flags plus the operator's own (`extra`). Unknown flags are an error naming
 * the flag, not silently ignored.
 */
export function parseManagerFlags<E extends NonNullable<ParseArgsConfig['options']>>(argv: string[], extra?: E) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { ...options, ...(extra ?? {}) }, allowPositionals: false, strict: true });
  } catch (err) {
    throw new FlagError((err as Error).message);
  }
  const v = parsed.values as Record<string, unknown>;
  const format = v['log-format'] as string;
  if (format !== 'json' && format !== 'pretty') throw new FlagError(`--log-format must be json or pretty, not "${format}"`);
  const flags: ManagerFlags = {
    metricsBindAddress: v['metrics-bind-address'] as string,
    healthProbeBindAddress: v['health-probe-bind-address'] as string,
    leaderElect: v['leader-elect'] as boolean,
    leaderElectionNamespace: v['leader-election-namespace'] as string | undefined,
    leaderElectionId: v['leader-election-id'] as string | undefined,
    kubeconfig: v.kubeconfig as string | undefined,
    logLevel: v['log-level'] as string,
    logFormat: format,
  };
  return { flags, help: v.help as boolean, values: v };
}

/** WATCH_NAMESPACE as operator-sdk reads it: comma-separated; empty or unset means all namespaces. */
export const watchNamespaces = (env: NodeJS.ProcessEnv = process.env): string[] =>
  (env.WATCH_NAMESPACE ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
