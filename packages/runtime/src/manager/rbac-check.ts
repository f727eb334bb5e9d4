import type { Client } from '../client/client.js';
import { defineKind } from '../client/kind.js';
import type { KubeObject } from '../client/types.js';
import type { PolicyRule } from '../rbac/rules.js';

interface SelfSubjectAccessReviewObject extends KubeObject {
  spec: { resourceAttributes: { verb: string; group: string; resource: string; subresource?: string; namespace?: string; name?: string } };
  status?: { allowed: boolean; denied?: boolean; reason?: string };
}

const SelfSubjectAccessReview = defineKind<SelfSubjectAccessReviewObject>({
  group: 'authorization.k8s.io',
  version: 'v1',
  kind: 'SelfSubjectAccessReview',
  plural: 'selfsubjectaccessreviews',
  namespaced: false,
});

/** One verb on one resource, in one namespace (or cluster-wide). */
export interface Permission {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  /** One object only (rules with resourceNames). */
  name?: string;
}

export const describePermission = (p: Permission): string =>
  `cannot ${p.verb} ${p.resource}${p.subresource ? `/${p.subresource}` : ''}${p.group ? `.${p.group}` : ''}${p.name ? ` "${p.name}"` : ''} ${p.namespace ? `in namespace ${p.namespace}` : 'cluster-wide'}`;

/**
 * What the rules need, where the operator needs it: namespaced rules in each watched namespace (or
 * cluster-wide when it watches all), cluster-scoped ones cluster-wide.
 */
export function permissionsFor(rules: PolicyRule[], namespaces: string[]): Permission[] {
  const out: Permission[] = [];
  for (const r of rules) {
    const scopes = r.clusterScoped || !namespaces.length ? [undefined] : namespaces;
    for (const group of r.apiGroups)
      for (const res of r.resources)
        for (const verb of r.verbs)
          for (const namespace of scopes)
            for (const name of r.resourceNames?.length ? r.resourceNames : [undefined]) {
              const [resource = res, subresource] = res.split('/');
              out.push({ verb, group, resource, subresource, namespace, name });
            }
  }
  return out;
}

/** The operator's role lacks permissions its controllers declare. */
export class RbacError extends Error {
  constructor(readonly missing: Permission[]) {
    super(
      `the operator's RBAC does not grant what its controllers declare (check the chart's ClusterRole and Roles):\n  ${missing.map(describePermission).join('\n  ')}`,
    );
    this.name = 'RbacError';
  }
}

/**
 * Asks the API server, with one SelfSubjectAccessReview per permission (a few at a time), which of
 * them this identity lacks. Every verb counts, writes included: a missing `patch` otherwise shows
 * only when the first object needs patching, as a failed reconcile.
 *
 * `ask` wraps each review (the manager retries transient failures there): an operator declares
 * dozens of permissions, and retrying the whole set when one review fails would almost never
 * succeed against an API server that drops one request in ten.
 */
export async function missingPermissions(
  client: Client,
  permissions: Permission[],
  o: { concurrency?: number; ask?: <T>(review: () => Promise<T>) => Promise<T> } = {},
): Promise<Permission[]> {
  const missing: Permission[] = [];
  const ask = o.ask ?? ((review) => review());
  let next = 0;
  const worker = async () => {
    while (next < permissions.length) {
      const p = permissions[next++]!;
      const review = await ask(() =>
        client.create(SelfSubjectAccessReview, {
          metadata: {},
          spec: {
            resourceAttributes: { verb: p.verb, group: p.group, resource: p.resource, subresource: p.subresource, namespace: p.namespace, name: p.name },
          },
        }),
      );
      if (!review.status?.allowed) missing.push(p);
    }
  };
  await Promise.all(Array.from({ length: Math.min(o.concurrency ?? 8, permissions.length) }, worker));
  return missing.sort((a, b) => describePermission(a).localeCompare(describePermission(b)));
}
