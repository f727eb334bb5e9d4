import { operatorEnvironment, type OperatorEnvironment } from './environment.js';
import { KubeConfig, type ClusterAccess } from '../client/kubeconfig.js';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Loads credentials in controller-runtime's order: the --kubeconfig flag, the KUBECONFIG
 * environment variable, the in-cluster ServiceAccount, then ~/.kube/config.
 */
export function loadKubeConfig(path?: string, env: NodeJS.ProcessEnv = process.env): KubeConfig {
  if (path) {
    if (!existsSync(path)) throw new Error(`--kubeconfig ${path}: no such file`);
    return KubeConfig.fromFiles([path]);
  }
  if (env.KUBECONFIG) {
    const paths = env.KUBECONFIG.split(':').filter(Boolean);
    const missing = paths.filter((p) => !existsSync(p));
    if (missing.length) throw new Error(`KUBECONFIG names ${missing.join(', ')}, which does not exist`);
    return KubeConfig.fromFiles(paths);
  }
  if (env.KUBERNETES_SERVICE_HOST && existsSync('/var/run/secrets/kubernetes.io/serviceaccount/token')) return KubeConfig.inCluster(env);
  const home = join(homedir(), '.kube', 'config');
  if (existsSync(home)) return KubeConfig.fromFiles([home]);
  throw new Error('no Kubernetes credentials: pass --kubeconfig, set KUBECONFIG, run in a cluster, or create ~/.kube/config');
}

/** The namespace this process runs in: POD_NAMESPACE, the in-cluster file, or the kubeconfig context's. */
export function currentNamespace(kc: ClusterAccess, env: OperatorEnvironment = operatorEnvironment()): string {
  if (env.podNamespace) return env.podNamespace;
  const file = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';
  if (existsSync(file)) {
    try {
      return readFileSync(file, 'utf8').trim();
    } catch {
      /* fall through */
    }
  }
  return kc.getContextObject(kc.getCurrentContext())?.namespace || 'default';
}
