import { CONTROLLER_INDEX, controllerReference, isControlledBy, Secret, type ReconcileContext } from '@opkit/runtime';
import { PROFILE_ANNOTATION } from '../../acme/profiles.js';
import { certIdOf } from '../../acme/renewal-info.js';
import type { CertApi } from '../../api/index.js';
import type { CertificateRequestObject } from '../../api/v1/certificaterequest.js';
import { secretAnnotation } from '../certificates/policies.js';
import { readSecretState } from '../certificates/secret-state.js';
import { adler32 } from '../../acme/solver-resources.js';
import { overrideAnnotationsOf } from '../../acme/solver-overrides.js';
import { FAILED_STATES } from '../../api/acme/v1/order.js';
import { childName } from '../../names.js';
import { inspectCertificate } from '../../pki/inspect.js';
import { publicKeyDer } from '../../pki/keys.js';
import { unb64, type Signer } from '../certificaterequests/controller.js';

/**
 * The ARI identifier of the certificate a request renews (RFC 9773 §5, the new order's `replaces`):
 * the one in its Certificate's Secret, when that Secret says this request's issuer issued it, as
 * cert-manager v1.21 finds it. Renewals that name what they replace are exempt from Let's
 * Encrypt's rate limits. Anything missing gives none: a first issuance replaces nothing.
 */
async function replacedCertificate(cr: CertificateRequestObject, ctx: ReconcileContext, api: CertApi): Promise<string | undefined> {
  const name = cr.metadata.annotations?.[api.A.certificateName];
  const c = name && (await ctx.cache.get(api.Certificate.kind, { namespace: cr.metadata.namespace, name }));
  if (!c) return undefined;
  const state = readSecretState(await ctx.cache.get(Secret, { namespace: cr.metadata.namespace, name: c.spec.secretName }, api.labelled));
  const issuedBy = (k: string) => secretAnnotation(api.groups, state, k);
  if (!state.certPem || issuedBy('issuer-name') !== cr.spec.issuerRef.name || (issuedBy('issuer-kind') ?? 'Issuer') !== (cr.spec.issuerRef.kind || 'Issuer'))
    return undefined;
  try {
    return certIdOf(inspectCertificate(state.certPem).x509.raw);
  } catch {
    return undefined;
  }
}

/**
 * The ACME signer of CertificateRequests: one Order per request (named after the CSR, so a retry
 * finds it), and the Order's certificate once valid. ACME returns no CA, so there is no ca.crt.
 */
export const acmeSigner: Signer = async (cr, csr, issuer, ctx, api) => {
  const { Order, CertificateRequest } = api;
  if (!csr.dnsNames.length && !csr.ipAddresses.length) return { failed: 'InvalidOrder: an ACME certificate needs at least one DNS name or IP address' };
  if (csr.commonName && !csr.dnsNames.includes(csr.commonName) && !csr.ipAddresses.includes(csr.commonName)) {
    return { failed: `InvalidOrder: the common name "${csr.commonName}" must be one of the DNS names (ACME certifies only the subject alternative names)` };
  }
  // By our name, or one this request already has under another name: cert-manager's (a hash of
  // its spec), taken over in flight, is carried on to its end, not ordered again.
  const ours = childName(cr.metadata.name, adler32(cr.spec.request));
  const order =
    (await ctx.cache.get(Order.kind, { namespace: cr.metadata.namespace, name: ours })) ??
    (await ctx.cache.list(Order.kind, { namespace: cr.metadata.namespace, index: { name: CONTROLLER_INDEX, value: cr.metadata.uid! } })).find(
      (o) => o.spec.request === cr.spec.request && isControlledBy(o, cr),
    );
  const name = order?.metadata.name ?? ours;
  const key = { namespace: cr.metadata.namespace, name };
  // An Order of this name made for another request (one deleted and made again with the same name
  // and CSR) is not ours to reuse: it is removed, and ours created.
  if (order && !order.metadata.ownerReferences?.some((o) => o.uid === cr.metadata.uid)) {
    const message = `Order ${cr.metadata.namespace}/${name} belonged to another CertificateRequest; ordering anew`;
    await ctx.delete(Order.kind, order, { preconditions: { uid: order.metadata.uid } });
    ctx.recorder.normal(cr, 'OrderReplaced', message);
    return { pending: message, requeueAfter: 1_000 };
  }
  if (!order) {
    const replaces = await replacedCertificate(cr, ctx, api);
    // A Certificate's own profile, under its own namespace's Issuer (its team's account). A
    // ClusterIssuer's profile is the platform's choice: a tenant asking for shortlived there would
    // renew fifteen times as often on the shared account's order limits.
    const ownProfile = cr.metadata.annotations?.[PROFILE_ANNOTATION];
    if (ownProfile && issuer.kind === 'ClusterIssuer')
      return {
        failed: `the ${PROFILE_ANNOTATION} annotation is honoured under an Issuer only: ClusterIssuer "${issuer.issuer.metadata.name}" decides the profile (its acme.profile)`,
      };
    const profile = ownProfile || issuer.issuer.spec.acme?.profile;
    await ctx.create(Order.kind, {
      metadata: {
        name,
        namespace: cr.metadata.namespace,
        labels: cr.metadata.labels,
        annotations: overrideAnnotationsOf(cr.metadata.annotations),
        ownerReferences: [controllerReference(CertificateRequest.kind, cr)],
      },
      spec: {
        request: cr.spec.request,
        issuerRef: cr.spec.issuerRef,
        // Empty values left out, as a Go client writes them (omitempty): the spec is compared whole.
        ...(csr.commonName ? { commonName: csr.commonName } : {}),
        ...(csr.dnsNames.length ? { dnsNames: csr.dnsNames } : {}),
        ...(csr.ipAddresses.length ? { ipAddresses: csr.ipAddresses } : {}),
        ...(cr.spec.duration ? { duration: cr.spec.duration } : {}),
        ...(replaces ? { replaces } : {}),
        // The Certificate's own profile (its annotation), else the issuer's.
        ...(profile ? { profile } : {}),
      },
    });
    ctx.recorder.normal(cr, 'OrderCreated', `Created Order resource ${cr.metadata.namespace}/${name}`);
    return { pending: `Created Order resource ${cr.metadata.namespace}/${name}` };
  }
  const state = order.status?.state;
  if (state && FAILED_STATES.includes(state)) return { failed: `Order ${cr.metadata.namespace}/${name} failed: ${order.status?.reason ?? state}` };
  if (state === 'valid' && order.status?.certificate) {
    const chain = unb64(order.status.certificate);
    if (!inspectCertificate(chain).publicKeyDer.equals(publicKeyDer(csr.publicKey))) {
      await ctx.delete(Order.kind, key);
      return { pending: `Order ${name} returned a certificate for another key; ordering again` };
    }
    return { issued: { certificate: chain, ca: '' } };
  }
  return {
    pending: `Waiting on certificate issuance from order ${cr.metadata.namespace}/${name}: "${state ?? 'pending'}"${order.status?.reason ? `: ${order.status.reason}` : ''}`,
  };
};
