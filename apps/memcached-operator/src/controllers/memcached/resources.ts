import { controllerReference, Deployment, Service, type ObjectOf } from '@opkit/runtime';
import { DEFAULT_IMAGE, Memcached, type MemcachedObject } from '../../api/v1beta1/memcached.js';
import { objectLabels, selectorLabels } from './labels.js';

type DeploymentObject = ObjectOf<typeof Deployment>;
type ServiceObject = ObjectOf<typeof Service>;

/**
 * memcached's own arguments: memory, port and threads from the spec, then the user's extra
 * arguments. `-t` only when threads is set: adding it to Memcacheds that never asked would roll
 * their pods (and empty their caches) on the operator's upgrade.
 */
export const memcachedArgs = (mc: MemcachedObject): string[] => [
  '-m',
  String(mc.spec.memoryLimitMB),
  '-p',
  String(mc.spec.port),
  ...(mc.spec.threads ? ['-t', String(mc.spec.threads)] : []),
  ...(mc.spec.extraArgs ?? []),
];

/**
 * The Deployment a Memcached should have. Only the fields the operator owns are stated; the API
 * server defaults the rest, and server-side apply leaves other managers' fields alone.
 */
export function desiredDeployment(mc: MemcachedObject): DeploymentObject {
  const name = mc.metadata.name;
  const port = mc.spec.port;
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: mc.metadata.namespace, labels: objectLabels(name), ownerReferences: [controllerReference(Memcached.kind, mc)] },
    spec: {
      replicas: mc.spec.replicas,
      progressDeadlineSeconds: mc.spec.progressDeadlineSeconds,
      selector: { matchLabels: selectorLabels(name) },
      template: {
        metadata: { labels: objectLabels(name) },
        spec: {
          // memcached needs no API access.
          automountServiceAccountToken: false,
          securityContext: { runAsNonRoot: true, runAsUser: 11211, runAsGroup: 11211, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [
            {
              name: 'memcached',
              image: mc.spec.image || DEFAULT_IMAGE,
              args: memcachedArgs(mc),
              ports: [{ name: 'memcached', containerPort: port, protocol: 'TCP' }],
              ...(mc.spec.resources ? { resources: mc.spec.resources as never } : {}),
              readinessProbe: { tcpSocket: { port: 'memcached' }, periodSeconds: 10 },
              livenessProbe: { tcpSocket: { port: 'memcached' }, initialDelaySeconds: 10, periodSeconds: 20 },
              securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
            },
          ],
        },
      },
    },
  };
}

/** A headless Service: clients resolve every memcached pod (consistent hashing is client-side). */
export function desiredService(mc: MemcachedObject): ServiceObject {
  const name = mc.metadata.name;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: mc.metadata.namespace, labels: objectLabels(name), ownerReferences: [controllerReference(Memcached.kind, mc)] },
    spec: {
      clusterIP: 'None',
      selector: selectorLabels(name),
      ports: [{ name: 'memcached', port: mc.spec.port, targetPort: 'memcached', protocol: 'TCP' }],
    },
  };
}
