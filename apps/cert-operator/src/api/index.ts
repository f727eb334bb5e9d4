import type { CustomResource } from '@opkit/runtime';
import { labelledSecrets } from '../secrets/secret-reader.js';
import { challengeResource } from './acme/v1/challenge.js';
import { orderResource } from './acme/v1/order.js';
import { API_GROUPS, annotationsOf, isOurIssuerGroup, labelsOf, solverLabelsOf, type ApiGroups, type ApiMode } from './groups.js';
import { certificateResource } from './v1/certificate.js';
import { certificateRequestResource } from './v1/certificaterequest.js';
import { clusterIssuerResource, issuerResource } from './v1/issuer.js';

export { annotationIn, API_GROUPS, API_MODES, CERT_MANAGER_GROUP, isOurIssuerGroup, type ApiGroups, type ApiMode } from './groups.js';

/**
 * Everything the operator's code names that depends on the API mode: the resources (one TypeBox
 * definition each, the group as data), the annotations and labels, and which issuerRefs are ours.
 * The operator reads it from its config (`cfg.api`); nothing imports a group as a constant, so one
 * process serves exactly one mode and a test can run either.
 */
function defineCertApi(groups: ApiGroups) {
  const Issuer = issuerResource(groups.cert);
  const ClusterIssuer = clusterIssuerResource(groups.cert);
  const Certificate = certificateResource(groups.cert);
  const CertificateRequest = certificateRequestResource(groups.cert);
  const Order = orderResource(groups.acme);
  const Challenge = challengeResource(groups.acme);
  const L = labelsOf(groups.cert);
  return {
    groups,
    Issuer,
    ClusterIssuer,
    Certificate,
    CertificateRequest,
    Order,
    Challenge,
    /** Every resource, in the order the chart renders them. */
    resources: [Issuer, ClusterIssuer, Certificate, CertificateRequest, Order, Challenge] as CustomResource<any, any>[],
    A: annotationsOf(groups.cert),
    L,
    /** The informer of Secrets cached in full (labelled for attention of this operator). */
    labelled: labelledSecrets(L.fao),
    solverLabels: solverLabelsOf(groups.acme),
    challengeFinalizer: `${groups.acme}/finalizer`,
    /** Is an issuerRef's group one of this operator's (an empty group is)? Others belong to external issuers. */
    isOurGroup: (group: string | undefined) => isOurIssuerGroup(groups, group),
  } as const;
}

export type CertApi = ReturnType<typeof defineCertApi>;

/** One CertApi per mode, built once. */
export const CERT_APIS: Record<ApiMode, CertApi> = {
  opkit: defineCertApi(API_GROUPS.opkit),
  'cert-manager': defineCertApi(API_GROUPS['cert-manager']),
};
