import { ConfigMap, controllerReference, Deployment, Service, type ObjectOf } from '@opkit/runtime';
import { CdnCluster, DEFAULT_IMAGE, type CdnClusterObject } from '../../api/v1/cdncluster.js';
import { NGINX_PORT } from '../../nginx/render.js';
import { CONFIG_HASH_ANNOTATION, objectLabels, selectorLabels } from './labels.js';

const CONFIG_DIR = '/etc/nginx/opkit';
export const configMapName = (cluster: string) => `${cluster}-nginx`;

const owner = (c: CdnClusterObject) => [controllerReference(CdnCluster.kind, c)];

export function desiredConfigMap(c: CdnClusterObject, config: string): ObjectOf<typeof ConfigMap> {
  const name = c.metadata.name;
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: configMapName(name), namespace: c.metadata.namespace, labels: objectLabels(name, c.spec.role), ownerReferences: owner(c) },
    data: { 'nginx.conf': config },
  };
}

/**
 * nginx pods mounting the configuration. The configuration's hash is on the pod template, so a new
 * configuration rolls out (a mounted ConfigMap alone would change under running nginx unnoticed).
 */
export function desiredDeployment(c: CdnClusterObject, configHash: string): ObjectOf<typeof Deployment> {
  const name = c.metadata.name;
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: c.metadata.namespace, labels: objectLabels(name, c.spec.role), ownerReferences: owner(c) },
    spec: {
      replicas: c.spec.replicas,
      selector: { matchLabels: selectorLabels(name) },
      template: {
        metadata: { labels: objectLabels(name, c.spec.role), annotations: { [CONFIG_HASH_ANNOTATION]: configHash } },
        spec: {
          automountServiceAccountToken: false,
          securityContext: { runAsNonRoot: true, runAsUser: 101, runAsGroup: 101, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [
            {
              name: 'nginx',
              image: c.spec.image || DEFAULT_IMAGE,
              command: ['nginx', '-c', `${CONFIG_DIR}/nginx.conf`, '-g', 'daemon off;'],
              ports: [{ name: 'http', containerPort: NGINX_PORT, protocol: 'TCP' }],
              ...(c.spec.resources ? { resources: c.spec.resources as never } : {}),
              readinessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 5 },
              livenessProbe: { httpGet: { path: '/healthz', port: 'http' }, initialDelaySeconds: 5, periodSeconds: 20 },
              securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
              volumeMounts: [
                { name: 'config', mountPath: CONFIG_DIR, readOnly: true },
                { name: 'tmp', mountPath: '/tmp' },
              ],
            },
          ],
          volumes: [
            { name: 'config', configMap: { name: configMapName(name) } },
            // nginx's temp files, pid and (for caches) the cache itself.
            { name: 'tmp', emptyDir: { sizeLimit: c.spec.role === 'cache' ? '1Gi' : '64Mi' } },
          ],
        },
      },
    },
  };
}

/** Port 80 in front of nginx's unprivileged 8080: what dependents and clients address. */
export function desiredService(c: CdnClusterObject): ObjectOf<typeof Service> {
  const name = c.metadata.name;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: c.metadata.namespace, labels: objectLabels(name, c.spec.role), ownerReferences: owner(c) },
    spec: { type: 'ClusterIP', selector: selectorLabels(name), ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }] },
  };
}
