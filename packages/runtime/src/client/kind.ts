import type {
  V1ConfigMap,
  V1Deployment,
  CoreV1Event,
  V1Ingress,
  V1Namespace,
  V1Node,
  V1Pod,
  V1ReplicaSet,
  V1Secret,
  V1Service,
  V1ServiceAccount,
  V1Lease,
  V1CustomResourceDefinition,
  V1MutatingWebhookConfiguration,
  V1ValidatingWebhookConfiguration,
  V1TokenReview,
  V1SubjectAccessReview,
  V1Role,
  V1RoleBinding,
  V1ClusterRole,
  V1ClusterRoleBinding,
  V1Endpoints,
} from '@kubernetes/client-node';
import type { KubeObject, Wire } from './types.js';

/**
 * Everything the runtime needs to address a kind: where it lives in the REST API and whether it is
 * namespaced. `T` is the object type, carried for inference only.
 */
export interface Kind<T extends KubeObject = KubeObject> {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
  /** Phantom field for type inference; never set. */
  readonly __type?: T;
}

export type ObjectOf<K> = K extends Kind<infer T> ? T : never;

export function defineKind<T extends KubeObject>(k: { group: string; version: string; kind: string; plural: string; namespaced: boolean }): Kind<T> {
  return Object.freeze({ ...k });
}

export const apiVersionOf = (k: Kind): string => (k.group ? `${k.group}/${k.version}` : k.version);

/** e.g. `deployments.apps` or `pods`: how RBAC and error messages name a resource. */
export const resourceName = (k: Kind): string => (k.group ? `${k.plural}.${k.group}` : k.plural);

export const kindKey = (k: Kind): string => `${apiVersionOf(k)}/${k.kind}`;

/** What a REST path addresses (the inverse of resourcePath); undefined for a path outside the resource API. */
export function parseResourcePath(path: string): { group: string; namespace?: string; resource: string; name?: string; subresource?: string } | undefined {
  const segments = path.split('?')[0]!.split('/').filter(Boolean);
  let group: string;
  let rest: string[];
  if (segments[0] === 'api' && segments.length >= 3) [group, rest] = ['', segments.slice(2)];
  else if (segments[0] === 'apis' && segments.length >= 4) [group, rest] = [segments[1]!, segments.slice(3)];
  else return undefined;
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [resource, name, subresource] = rest;
  return resource ? { group, namespace, resource, name, subresource } : undefined;
}

/** The REST path of a collection or one object (and optionally its subresource). */
export function resourcePath(k: Kind, namespace?: string, name?: string, subresource?: string): string {
  const base = k.group ? `/apis/${k.group}/${k.version}` : `/api/${k.version}`;
  let path = base;
  if (k.namespaced && namespace) path += `/namespaces/${encodeURIComponent(namespace)}`;
  path += `/${k.plural}`;
  if (name) path += `/${encodeURIComponent(name)}`;
  if (subresource) path += `/${subresource}`;
  return path;
}

type W<T> = Wire<T> & KubeObject;
const core = <T extends KubeObject>(kind: string, plural: string, namespaced = true) => defineKind<T>({ group: '', version: 'v1', kind, plural, namespaced });

export const Pod = core<W<V1Pod>>('Pod', 'pods');
export const Service = core<W<V1Service>>('Service', 'services');
export const ConfigMap = core<W<V1ConfigMap>>('ConfigMap', 'configmaps');
export const Secret = core<W<V1Secret>>('Secret', 'secrets');
export const ServiceAccount = core<W<V1ServiceAccount>>('ServiceAccount', 'serviceaccounts');
export const Endpoints = core<W<V1Endpoints>>('Endpoints', 'endpoints');
export const CoreEvent = core<W<CoreV1Event>>('Event', 'events');
export const Namespace = core<W<V1Namespace>>('Namespace', 'namespaces', false);
export const Node = core<W<V1Node>>('Node', 'nodes', false);
export const Deployment = defineKind<W<V1Deployment>>({ group: 'apps', version: 'v1', kind: 'Deployment', plural: 'deployments', namespaced: true });
export const ReplicaSet = defineKind<W<V1ReplicaSet>>({ group: 'apps', version: 'v1', kind: 'ReplicaSet', plural: 'replicasets', namespaced: true });
export const Lease = defineKind<W<V1Lease>>({ group: 'coordination.k8s.io', version: 'v1', kind: 'Lease', plural: 'leases', namespaced: true });
export const Ingress = defineKind<W<V1Ingress>>({ group: 'networking.k8s.io', version: 'v1', kind: 'Ingress', plural: 'ingresses', namespaced: true });
export const CustomResourceDefinition = defineKind<W<V1CustomResourceDefinition>>({
  group: 'apiextensions.k8s.io',
  version: 'v1',
  kind: 'CustomResourceDefinition',
  plural: 'customresourcedefinitions',
  namespaced: false,
});
export const Role = defineKind<W<V1Role>>({ group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'Role', plural: 'roles', namespaced: true });
export const RoleBinding = defineKind<W<V1RoleBinding>>({
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  kind: 'RoleBinding',
  plural: 'rolebindings',
  namespaced: true,
});
export const ClusterRole = defineKind<W<V1ClusterRole>>({
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  kind: 'ClusterRole',
  plural: 'clusterroles',
  namespaced: false,
});
export const ClusterRoleBinding = defineKind<W<V1ClusterRoleBinding>>({
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  kind: 'ClusterRoleBinding',
  plural: 'clusterrolebindings',
  namespaced: false,
});
export const MutatingWebhookConfiguration = defineKind<W<V1MutatingWebhookConfiguration>>({
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  kind: 'MutatingWebhookConfiguration',
  plural: 'mutatingwebhookconfigurations',
  namespaced: false,
});
export const ValidatingWebhookConfiguration = defineKind<W<V1ValidatingWebhookConfiguration>>({
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  kind: 'ValidatingWebhookConfiguration',
  plural: 'validatingwebhookconfigurations',
  namespaced: false,
});
export const TokenReview = defineKind<W<V1TokenReview>>({
  group: 'authentication.k8s.io',
  version: 'v1',
  kind: 'TokenReview',
  plural: 'tokenreviews',
  namespaced: false,
});
export const SubjectAccessReview = defineKind<W<V1SubjectAccessReview>>({
  group: 'authorization.k8s.io',
  version: 'v1',
  kind: 'SubjectAccessReview',
  plural: 'subjectaccessreviews',
  namespaced: false,
});
