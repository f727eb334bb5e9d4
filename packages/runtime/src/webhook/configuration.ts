import { CONVERSION_PATH } from '../crd/versioned-resource.js';
import type { AdmissionWebhook } from './admission.js';

/** How the API server reaches the webhook server: a Service in the cluster, or a URL (a local run). */
export type ClientConfig = { service: { name: string; namespace: string; port: number } } | { url: string };

const withPath = (c: ClientConfig, path: string) => ('url' in c ? { url: `${c.url.replace(/\/$/, '')}${path}` } : { service: { ...c.service, path } });

/**
 * The Mutating- and ValidatingWebhookConfiguration that register `hooks`, named `name`, without a
 * caBundle (the runtime injects its CA). The chart renders the same objects with a Service reference.
 */
export function webhookConfigurations(name: string, hooks: AdmissionWebhook[], clientConfig: ClientConfig) {
  const entry = (h: AdmissionWebhook) => ({
    name: h.name,
    admissionReviewVersions: ['v1'],
    // The handlers write nothing: a dry run is safe to send them.
    sideEffects: 'None',
    failurePolicy: h.failurePolicy,
    timeoutSeconds: h.timeoutSeconds,
    // Requests in any version of the API are converted to the one the webhook was written for.
    matchPolicy: 'Equivalent',
    clientConfig: withPath(clientConfig, h.path),
    ...(h.scope?.namespaceSelector ? { namespaceSelector: h.scope.namespaceSelector } : {}),
    ...(h.scope?.objectSelector ? { objectSelector: h.scope.objectSelector } : {}),
    ...(h.scope?.matchConditions?.length ? { matchConditions: h.scope.matchConditions } : {}),
    rules: [
      {
        apiGroups: [h.kind.group],
        apiVersions: [h.kind.version],
        resources: h.subresources?.length ? h.subresources.map((s) => `${h.kind.plural}/${s}`) : [h.kind.plural],
        operations: h.operations,
        scope: h.kind.namespaced ? 'Namespaced' : 'Cluster',
      },
    ],
  });
  const of = (type: AdmissionWebhook['type'], kind: string) => {
    const list = hooks.filter((h) => h.type === type);
    return list.length ? { apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name }, webhooks: list.map(entry) } : undefined;
  };
  return { mutating: of('mutating', 'MutatingWebhookConfiguration'), validating: of('validating', 'ValidatingWebhookConfiguration') };
}

/** A versioned CRD whose conversion webhook is reached at `clientConfig`. */
export function withConversionClient<T extends Record<string, unknown>>(crd: T, clientConfig: ClientConfig): T {
  const spec = crd.spec as { conversion?: { webhook?: { clientConfig?: unknown } } } | undefined;
  if (!spec?.conversion?.webhook) return crd;
  return {
    ...crd,
    spec: { ...spec, conversion: { ...spec.conversion, webhook: { ...spec.conversion.webhook, clientConfig: withPath(clientConfig, CONVERSION_PATH) } } },
  };
}
