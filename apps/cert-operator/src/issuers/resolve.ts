import type { Cache } from '@opkit/runtime';
import type { IssuerObject } from '../api/v1/issuer.js';
import type { CertOperatorConfig } from '../config.js';

export type IssuerKindName = 'Issuer' | 'ClusterIssuer';

export interface ResolvedIssuer {
  kind: IssuerKindName;
  issuer: IssuerObject;
  /** Where the issuer's Secrets are read from. */
  resourceNamespace: string;
}

export type IssuerLookup =
  { ok: true; resolved: ResolvedIssuer } | { ok: false; reason: 'IssuerNotFound' | 'UnsupportedIssuerGroup' | 'InvalidIssuerKind'; message: string };

/** `Issuer/name` or `ClusterIssuer/name`: how Certificates and requests are indexed by issuer. */
export const issuerIndexKey = (ref: { name: string; kind?: string }) => `${ref.kind || 'Issuer'}/${ref.name}`;

export async function resolveIssuer(
  cache: Cache,
  ref: { name: string; kind?: string; group?: string },
  namespace: string,
  cfg: CertOperatorConfig,
): Promise<IssuerLookup> {
  const { Issuer, ClusterIssuer, groups } = cfg.api;
  if (!cfg.api.isOurGroup(ref.group))
    return {
      ok: false,
      reason: 'UnsupportedIssuerGroup',
      message: `issuerRef.group "${ref.group}" is not served by this operator (${groups.issuerGroups.join(', or ')})`,
    };
  const kind: string = ref.kind || 'Issuer';
  if (kind !== 'Issuer' && kind !== 'ClusterIssuer')
    return { ok: false, reason: 'InvalidIssuerKind', message: `issuerRef.kind must be Issuer or ClusterIssuer, not "${ref.kind}"` };
  const issuer =
    kind === 'Issuer'
      ? await cache.get(Issuer.kind, { namespace, name: ref.name })
      : ((await cache.get(ClusterIssuer.kind, { name: ref.name })) as IssuerObject | undefined);
  if (!issuer)
    return { ok: false, reason: 'IssuerNotFound', message: `${kind} "${ref.name}" not found${kind === 'Issuer' ? ` in namespace ${namespace}` : ''}` };
  return { ok: true, resolved: { kind, issuer, resourceNamespace: kind === 'Issuer' ? namespace : cfg.clusterResourceNamespace } };
}

export const issuerReady = (issuer: IssuerObject) => issuer.status?.conditions?.find((c) => c.type === 'Ready');
