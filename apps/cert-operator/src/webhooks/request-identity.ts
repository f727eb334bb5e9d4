import { mutatingWebhook } from '@opkit/runtime';
import type { CertApi } from '../api/index.js';

/**
 * Records who created each CertificateRequest, as cert-manager's webhook does: `spec.username`,
 * `uid`, `groups` and `extra` are set from the request's authenticated user, overwriting whatever
 * the creator wrote, so an approver can trust them. The spec is immutable after creation (the
 * CRD's CEL rule), so the record cannot be changed later either.
 */
export const requestIdentity = ({ CertificateRequest, groups }: CertApi) =>
  mutatingWebhook(CertificateRequest.kind, {
    name: `identity.certificaterequests.${groups.cert}`,
    operations: ['CREATE'],
    failurePolicy: 'Fail',
    why: 'a CertificateRequest admitted without it would carry whatever identity its creator wrote; while the operator is down, creating requests fails (Certificates retry), which is the lesser harm',
    timeoutSeconds: 5,
    mutate(cr, { userInfo }) {
      cr.spec.username = userInfo.username;
      cr.spec.uid = userInfo.uid || undefined;
      cr.spec.groups = userInfo.groups?.length ? userInfo.groups : undefined;
      cr.spec.extra = userInfo.extra && Object.keys(userInfo.extra).length ? userInfo.extra : undefined;
    },
  });
