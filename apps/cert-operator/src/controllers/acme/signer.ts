import { controllerReference, isControlledBy } from '@opkit/runtime';
import { adler32 } from '../../acme/solver-resources.js';
import { overrideAnnotationsOf } from '../../acme/solver-overrides.js';
import { FAILED_STATES } from '../../api/acme/v1/order.js';
import { childName } from '../../names.js';
import { inspectCertificate } from '../../pki/inspect.js';
import { publicKeyDer } from '../../pki/keys.js';
import { unb64, type Signer } from '../certificaterequests/controller.js';

/**
 * The ACME signer of CertificateRequests: one Order per request (named after the CSR, so a retry
 * finds it), and the Order's certificate once valid. ACME returns no CA, so there is no ca.crt.
 */
export const acmeSigner: Signer = async (cr, csr, _issuer, ctx, { Order, CertificateRequest }) => {
  if (!csr.dnsNames.length && !csr.ipAddresses.length) return { failed: 'InvalidOrder: an ACME certificate needs at least one DNS name or IP address' };
  if (csr.commonName && !csr.dnsNames.includes(csr.commonName) && !csr.ipAddresses.includes(csr.commonName)) {
    return { failed: `InvalidOrder: the common name "${csr.commonName}" must be one of the DNS names (ACME certifies only the subject alternative names)` };
  }
  // By our name, or one this request already has under another name: cert-manager's (a hash of
  // its spec), taken over in flight, is carried on to its end, not ordered again.
  const ours = childName(cr.metadata.name, adler32(cr.spec.request));
  const order =
    (await ctx.cache.get(Order.kind, { namespace: cr.metadata.namespace, name: ours })) ??
    (await ctx.cache.list(Order.kind, { namespace: cr.metadata.namespace })).find((o) => o.spec.request === cr.spec.request && isControlledBy(o, cr));
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
