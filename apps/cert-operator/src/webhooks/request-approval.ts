import { SubjectAccessReview, validatingWebhook, type Client, type UserInfo } from '@opkit/runtime';
import { isOurIssuerGroup, type ApiGroups } from '../api/groups.js';
import type { CertApi } from '../api/index.js';
import type { CertificateRequestObject } from '../api/v1/certificaterequest.js';

/**
 * Approval that means something, as cert-manager's: only an identity allowed to `approve` the
 * request's signer may set `Approved` or `Denied`, not anyone who may update
 * `certificaterequests/status`. The signer of a request for Issuer `ca` in namespace `shop` is
 * `issuers.cert.opkit.dev/shop.ca` (a ClusterIssuer's: `clusterissuers.cert.opkit.dev/<name>`;
 * an external issuer's: `<kind plural>.<its group>/…`); `issuers.cert.opkit.dev/*` grants them
 * all. RBAC: verb `approve` on resource `signers` of the API mode's group (cert.opkit.dev or
 * cert-manager.io), by resourceNames.
 */
export const approvePermission = (groups: ApiGroups) => ({ group: groups.cert, resource: 'signers', verb: 'approve' }) as const;

type IssuerRef = CertificateRequestObject['spec']['issuerRef'];
type Condition = { type: string; status: string };

/** The signer names that grant approval of a request for `ref` in `namespace`: the wildcard, then the issuer's own. */
export function signerNames(groups: ApiGroups, ref: IssuerRef, namespace: string): [string, string] {
  const isOurGroup = (g: string | undefined) => isOurIssuerGroup(groups, g);
  const kind = ref.kind || 'Issuer';
  const group = isOurGroup(ref.group) ? groups.cert : ref.group!;
  const plural = `${kind.toLowerCase()}s`;
  return [
    `${plural}.${group}/*`,
    kind === 'ClusterIssuer' && isOurGroup(ref.group) ? `${plural}.${group}/${ref.name}` : `${plural}.${group}/${namespace}.${ref.name}`,
  ];
}

const decision = (conditions: Condition[] | undefined, type: 'Approved' | 'Denied') => conditions?.find((c) => c.type === type)?.status;

/**
 * What an update of a request's status does to its approval (pure, table-tested): nothing, a
 * decision to authorize, or a change that is refused whoever makes it (a decision, once made, is
 * final; a request is not both approved and denied).
 */
export function approvalChange(
  before: Condition[] | undefined,
  after: Condition[] | undefined,
): { kind: 'none' } | { kind: 'decides'; type: 'Approved' | 'Denied' } | { kind: 'refused'; reason: string } {
  const approved = [decision(before, 'Approved'), decision(after, 'Approved')] as const;
  const denied = [decision(before, 'Denied'), decision(after, 'Denied')] as const;
  if (approved[1] !== undefined && denied[1] !== undefined) return { kind: 'refused', reason: 'a CertificateRequest cannot be both Approved and Denied' };
  for (const [type, [was, now]] of [
    ['Approved', approved],
    ['Denied', denied],
  ] as const) {
    if (was !== undefined && was !== now) return { kind: 'refused', reason: `the ${type} condition is final once set: it may not be changed or removed` };
  }
  if (approved[0] === undefined && approved[1] !== undefined) {
    if (approved[1] !== 'True') return { kind: 'refused', reason: 'the Approved condition may only be set with status True' };
    return { kind: 'decides', type: 'Approved' };
  }
  if (denied[0] === undefined && denied[1] !== undefined) {
    if (denied[1] !== 'True') return { kind: 'refused', reason: 'the Denied condition may only be set with status True' };
    return { kind: 'decides', type: 'Denied' };
  }
  return { kind: 'none' };
}

/** Whether `user` may approve for any of `names` (a SubjectAccessReview each, the wildcard first). */
async function mayApprove(client: Client, APPROVE: ReturnType<typeof approvePermission>, user: UserInfo, names: readonly string[]): Promise<boolean> {
  for (const name of names) {
    const review = await client.create(SubjectAccessReview, {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      metadata: {},
      spec: {
        user: user.username,
        uid: user.uid,
        groups: user.groups,
        extra: user.extra,
        resourceAttributes: { group: APPROVE.group, resource: APPROVE.resource, verb: APPROVE.verb, name },
      },
    } as never);
    if ((review as { status?: { allowed?: boolean } }).status?.allowed) return true;
  }
  return false;
}

/**
 * The validating webhook on `certificaterequests/status`. `Fail`: a request approved while no
 * replica answers would be approved by whoever could write its status, which is what this stops.
 */
export function requestApproval({ CertificateRequest, groups }: CertApi, client: Client | undefined) {
  const APPROVE = approvePermission(groups);
  return validatingWebhook(CertificateRequest.kind, {
    name: `approval.certificaterequests.${groups.cert}`,
    operations: ['UPDATE'],
    subresources: ['status'],
    failurePolicy: 'Fail',
    why: 'an approval the webhook did not see could come from anyone allowed to update the status; while the operator is down, status updates of requests wait (its own included)',
    timeoutSeconds: 10,
    async validate({ object, oldObject, userInfo, subResource }) {
      if (subResource !== 'status' || !object) return;
      const change = approvalChange(oldObject?.status?.conditions, object.status?.conditions);
      if (change.kind === 'none') return;
      if (change.kind === 'refused') return change.reason;
      const names = signerNames(groups, object.spec.issuerRef, object.metadata.namespace ?? '');
      if (!client) throw new Error('served without an API client');
      if (await mayApprove(client, APPROVE, userInfo, names)) return;
      return `user "${userInfo.username ?? ''}" may not set ${change.type}: it needs the "${APPROVE.verb}" verb on "${APPROVE.resource}" of group ${APPROVE.group} for "${names[1]}" (or "${names[0]}")`;
    },
  });
}
