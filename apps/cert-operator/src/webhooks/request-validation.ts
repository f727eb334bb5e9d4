import { validatingWebhook, webhookPath } from '@opkit/runtime';
import type { CertApi } from '../api/index.js';
import { parseCSR } from '../pki/csr.js';
import { unb64 } from '../controllers/certificaterequests/controller.js';

/**
 * Refuses a CertificateRequest whose CSR cannot be read, at creation, as cert-manager's webhook
 * does, so its creator is told at once instead of reading a condition later. Named
 * `webhook.<group>`: in cert-manager mode that is cert-manager's own webhook's name, which tools
 * look for in a denial (`cmctl check api` matches `admission webhook "webhook.cert-manager.io"
 * denied the request`). `Ignore`: a request it did not see is still judged by the request
 * controller (Ready=False with InvalidRequest, final), so its absence costs no safety.
 */
export const requestValidation = ({ CertificateRequest, groups }: CertApi) =>
  validatingWebhook(CertificateRequest.kind, {
    name: `webhook.${groups.cert}`,
    // The kind's default validating path serves the approval webhook (on the status).
    path: `${webhookPath('validating', CertificateRequest.kind)}-create`,
    operations: ['CREATE'],
    failurePolicy: 'Ignore',
    why: 'a request it did not see is marked InvalidRequest by the request controller instead; refusing creations while the operator is down would gain nothing',
    timeoutSeconds: 5,
    async validate({ object }) {
      if (!object) return undefined;
      try {
        await parseCSR(unb64(object.spec.request));
        return undefined;
      } catch (err) {
        return `spec.request: Invalid value: ${(err as Error).message}`;
      }
    },
  });
