import { operatorEnvironment, type OperatorEnvironment } from './environment.js';
import { KubeConfig } from '@kubernetes/client-node';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Loads credentials in controller-runtime's order: the --kubeconfig flag, the KUBECONFIG
 * environment variable, the in-cluster ServiceAccount, then ~/.kube/config.
 */
export function loadKubeConfig(path?: string, env: NodeJS.ProcessEnv = process.env): KubeConfig {
  const kc = new KubeConfig();
  if (path) {
    if (!existsSync(path)) throw new Error(`--kubeconfig ${path}: no such file`);
    kc.loadFromFile(path);
    return kc;
  }
  if (env.KUBECONFIG) {
    const missing = env.KUBECONFIG.split(':').filter((p) => p && !existsSync(p));
    if (missing.length) throw new Error(`KUBECONFIG names ${missing.join(', ')}, which does not exist`);
    kc.loadFromDefault();
    return kc;
  }
  if (env.KUBERNETES_SERVICE_HOST && existsSync('/var/run/secrets/kubernetes.io/serviceaccount/token')) {
    kc.loadFromCluster();
    return kc;
  }
  const home = join(homedir(), '.kube', 'config');
  if (existsSync(home)) {
    kc.loadFromFile(home);
    return kc;
  }
  throw new Error('no Kubernetes credentials: pass --kubeconfig, set KUBECONFIG, run in a cluster, or create ~/.kube/config');
}

/** The namespace this process runs in: POD_NAMESPACE, the in-cluster file, or the kubeconfig context's. */
export function currentNamespace(kc: KubeConfig, env: OperatorEnvironment = operatorEnvironment()): string {
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
