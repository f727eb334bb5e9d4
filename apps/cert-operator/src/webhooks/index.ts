import type { AdmissionWebhook, Client } from '@opkit/runtime';
import type { CertApi } from '../api/index.js';
import { requestApproval } from './request-approval.js';
import { requestIdentity } from './request-identity.js';
import { requestValidation } from './request-validation.js';

/**
 * The cert operator's admission webhooks: what the manager serves and what the chart registers,
 * from this one list. The approval webhook asks the API server through `client` when it serves;
 * the chart's generator only renders the registrations (no client).
 */
export const certWebhooks = (api: CertApi, client?: Client): AdmissionWebhook[] => [requestIdentity(api), requestValidation(api), requestApproval(api, client)];
