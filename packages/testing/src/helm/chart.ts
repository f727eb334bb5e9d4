import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { findBinary } from '../assets/binaries.js';
import { run, type RunResult } from '../run.js';
import { vendorChartDependencies } from './vendor.js';

export interface ChartOptions {
  release?: string;
  namespace?: string;
  values?: Record<string, unknown>;
  /** Kubernetes version for offline rendering (`.Capabilities.KubeVersion`). */
  kubeVersion?: string;
}

export const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Chart values `over` laid on `base`: maps merged key by key, anything else replaced (as helm merges values files). */
export function mergeValues(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = isMap(out[k]) && isMap(v) ? mergeValues(out[k] as Record<string, unknown>, v) : v;
  return out;
}

/** helm's cache, config and data under `home`: helm keeps them under $HOME, and tests must not touch a developer's. */
export function helmHomeEnv(home: string): { HELM_CACHE_HOME: string; HELM_CONFIG_HOME: string; HELM_DATA_HOME: string } {
  return { HELM_CACHE_HOME: join(home, 'cache'), HELM_CONFIG_HOME: join(home, 'config'), HELM_DATA_HOME: join(home, 'data') };
}

function helmEnv(extra: NodeJS.ProcessEnv = {}) {
  const home = mkdtempSync(join(tmpdir(), 'opkit-helm-'));
  return { home, env: { ...process.env, ...helmHomeEnv(home), ...extra } };
}

async function withValues<T>(values: Record<string, unknown> | undefined, fn: (args: string[], env: NodeJS.ProcessEnv) => Promise<T>): Promise<T> {
  const { home, env } = helmEnv();
  try {
    const args: string[] = [];
    if (values) {
      const file = join(home, 'values.yaml');
      writeFileSync(file, stringify(values));
      args.push('--values', file);
    }
    return await fn(args, env);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** `helm lint --strict`; rejects with helm's findings. */
export async function helmLint(chartDir: string, opts: ChartOptions = {}): Promise<RunResult> {
  await vendorChartDependencies(chartDir);
  return withValues(opts.values, (args, env) => run(findBinary('helm'), ['lint', '--strict', chartDir, ...args], { env }));
}

/** `helm template`: the manifests a release would apply. */
export async function helmTemplate(chartDir: string, opts: ChartOptions = {}): Promise<string> {
  await vendorChartDependencies(chartDir);
  return withValues(opts.values, async (args, env) => {
    const r = await run(
      findBinary('helm'),
      [
        'template',
        opts.release ?? 'test',
        chartDir,
        '--namespace',
        opts.namespace ?? 'default',
        ...(opts.kubeVersion ? ['--kube-version', opts.kubeVersion] : []),
        ...args,
      ],
      { env },
    );
    return r.stdout;
  });
}

/** `helm install|upgrade --install` against a kubeconfig. */
export async function helmUpgradeInstall(
  kubeconfig: string,
  chartDir: string,
  opts: ChartOptions & { wait?: boolean; createNamespace?: boolean; timeout?: string } = {},
): Promise<RunResult> {
  await vendorChartDependencies(chartDir);
  return withValues(opts.values, (args, env) =>
    run(
      findBinary('helm'),
      [
        'upgrade',
        '--install',
        opts.release ?? 'test',
        chartDir,
        '--namespace',
        opts.namespace ?? 'default',
        '--kubeconfig',
        kubeconfig,
        ...(opts.createNamespace ? ['--create-namespace'] : []),
        ...(opts.wait ? ['--wait', '--timeout', opts.timeout ?? '120s'] : []),
        ...args,
      ],
      { env },
    ),
  );
}

export function helmUninstall(kubeconfig: string, release: string, namespace: string): Promise<RunResult> {
  const { home, env } = helmEnv();
  return run(findBinary('helm'), ['uninstall', release, '--namespace', namespace, '--kubeconfig', kubeconfig, '--wait'], { env }).finally(() =>
    rmSync(home, { recursive: true, force: true }),
  );
}

/**
 * Applies manifests with kubectl. `dryRun: 'server'` sends them through the API server's full
 * validation (schemas, CRD structural schemas, CEL, admission) without persisting anything.
 */
export function kubectlApply(kubeconfig: string, manifests: string, opts: { dryRun?: 'server'; namespace?: string } = {}): Promise<RunResult> {
  return run(
    findBinary('kubectl'),
    [
      '--kubeconfig',
      kubeconfig,
      'apply',
      '--server-side',
      '--field-manager=opkit-test',
      ...(opts.dryRun ? [`--dry-run=${opts.dryRun}`] : []),
      ...(opts.namespace ? ['-n', opts.namespace] : []),
      '-f',
      '-',
    ],
    { input: manifests },
  );
}
