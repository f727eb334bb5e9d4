import { stringify } from 'yaml';

export interface KubeconfigUser {
  name: string;
  cert?: string;
  key?: string;
  token?: string;
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

/** A kubeconfig in the shape envtest writes: one cluster, one user, one context. */
export function renderKubeconfig(server: string, caPem: string, user: KubeconfigUser, clusterName = 'opkit'): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: clusterName, cluster: { server, 'certificate-authority-data': b64(caPem) } }],
    users: [
      {
        name: user.name,
        user: user.token ? { token: user.token } : { 'client-certificate-data': b64(user.cert ?? ''), 'client-key-data': b64(user.key ?? '') },
      },
    ],
    contexts: [{ name: clusterName, context: { cluster: clusterName, user: user.name } }],
    'current-context': clusterName,
  });
}
