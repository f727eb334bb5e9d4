import type { Kind } from '../client/kind.js';
import { resourceName } from '../client/kind.js';
import type { KubeObject } from '../client/types.js';
import { diffPatch } from './json-patch.js';

/** Who made the request, as the API server authenticated them. */
export interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** The request of an AdmissionReview (admission.k8s.io/v1), typed by the object's kind. */
export interface AdmissionRequest<T extends KubeObject = KubeObject> {
  uid: string;
  operation: Operation;
  userInfo: UserInfo;
  name?: string;
  namespace?: string;
  object?: T;
  oldObject?: T;
  dryRun?: boolean;
  subResource?: string;
}

interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: { code: number; reason?: string; message: string };
  patchType?: 'JSONPatch';
  patch?: string;
  warnings?: string[];
}

/** A Kubernetes label selector, as a webhook configuration takes it. */
export interface WebhookLabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }[];
}

/**
 * Which requests the API server sends a webhook at all: requests it filters out never leave the API
 * server (no latency, no failure policy in play). Evaluated by the API server, in this order.
 */
export interface WebhookScope {
  /** Only objects in namespaces with these labels (e.g. not `kube-system`). */
  namespaceSelector?: WebhookLabelSelector;
  /** Only objects with these labels (old or new object). */
  objectSelector?: WebhookLabelSelector;
  /**
   * CEL expressions over `request`, `object`, `oldObject`, `authorizer`, all of which must be true
   * (at most 64; Kubernetes 1.30 and later): `!(request.userInfo.username == "system:admin")`.
   */
  matchConditions?: { name: string; expression: string }[];
}

/**
 * An admission webhook: the handler the manager serves at `path`, and everything the chart needs to
 * register it (rendered by `renderWebhookConfigurationsTemplate`).
 */
export interface AdmissionWebhook {
  type: 'mutating' | 'validating';
  /** The webhook's name in its configuration: a DNS name, qualified by the API group. */
  name: string;
  path: string;
  kind: Kind;
  operations: Operation[];
  /**
   * `Fail` when letting a request through unchecked breaks a promise (identity that must not be
   * forged); `Ignore` when the webhook only helps. Stated, with `why`, for every webhook.
   */
  failurePolicy: 'Fail' | 'Ignore';
  /** Why this failure policy: shown in the chart next to the configuration. */
  why: string;
  /** Seconds the API server waits (1–30). Short: an admission call holds a user's request. */
  timeoutSeconds: number;
  /** The subresources (e.g. `status`) the webhook sees writes of, instead of the object's own. */
  subresources?: string[];
  /** Which requests reach it (selectors, match conditions). */
  scope?: WebhookScope;
  handle(request: AdmissionRequest): Promise<AdmissionResponse>;
}

/** Reasons a validator gives; none (or an empty list) admits the object. */
export type Denial = string | string[] | undefined | void;

interface WebhookSpec extends WebhookScope {
  operations: Operation[];
  failurePolicy: 'Fail' | 'Ignore';
  why: string;
  /** Default `<validate|mutate>.<plural>.<group>`. */
  name?: string;
  timeoutSeconds?: number;
  /** Writes of these subresources (e.g. `status`) instead of the object's own. */
  subresources?: string[];
  /**
   * Default kubebuilder's `/<mutate|validate>-<group>-<version>-<kind>`. Set for a second webhook
   * of the same type and kind (a path serves one webhook; the manager refuses a second).
   */
  path?: string;
}

const deny = (uid: string, code: number, message: string, reason = 'Forbidden'): AdmissionResponse => ({
  uid,
  allowed: false,
  status: { code, reason, message },
});

/** kubebuilder's path convention, a webhook's default path: /<mutate|validate>-<group with dashes>-<version>-<kind lower-cased>. */
export function webhookPath(type: 'mutating' | 'validating', kind: Kind): string {
  const verb = type === 'mutating' ? 'mutate' : 'validate';
  return `/${verb}-${(kind.group || 'core').replaceAll('.', '-')}-${kind.version}-${kind.kind.toLowerCase()}`;
}

function base(type: 'mutating' | 'validating', kind: Kind, spec: WebhookSpec) {
  const verb = type === 'mutating' ? 'mutate' : 'validate';
  return {
    type,
    name: spec.name ?? `${verb}.${kind.plural}.${kind.group || 'core.k8s.io'}`,
    path: spec.path ?? webhookPath(type, kind),
    kind,
    operations: spec.operations,
    failurePolicy: spec.failurePolicy,
    why: spec.why,
    timeoutSeconds: spec.timeoutSeconds ?? 5,
    ...(spec.subresources?.length ? { subresources: spec.subresources } : {}),
    ...(spec.namespaceSelector || spec.objectSelector || spec.matchConditions?.length
      ? { scope: { namespaceSelector: spec.namespaceSelector, objectSelector: spec.objectSelector, matchConditions: spec.matchConditions } }
      : {}),
  };
}

/**
 * A mutating webhook: `mutate` gets a copy of the incoming object and the request, changes the
 * copy (or returns a new object), and the webhook answers with the JSON Patch between the two. A
 * thrown error refuses the request with its message.
 */
export function mutatingWebhook<T extends KubeObject>(
  kind: Kind<T>,
  spec: WebhookSpec & { mutate(obj: T, request: AdmissionRequest<T>): T | void | Promise<T | void> },
): AdmissionWebhook {
  return {
    ...base('mutating', kind, spec),
    async handle(request) {
      if (!request.object) return { uid: request.uid, allowed: true };
      const copy = structuredClone(request.object) as T;
      try {
        const out = (await spec.mutate(copy, request as AdmissionRequest<T>)) ?? copy;
        const ops = diffPatch(request.object, out);
        return ops.length
          ? { uid: request.uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64') }
          : { uid: request.uid, allowed: true };
      } catch (err) {
        return deny(request.uid, 400, `${resourceName(kind)}: ${(err as Error).message}`, 'BadRequest');
      }
    },
  };
}

/**
 * A validating webhook: `validate` returns the reasons to refuse (none admits). The API server
 * shows the reasons to whoever made the request, as it shows a CRD's own validation errors.
 */
export function validatingWebhook<T extends KubeObject>(
  kind: Kind<T>,
  spec: WebhookSpec & { validate(request: AdmissionRequest<T>): Denial | Promise<Denial> },
): AdmissionWebhook {
  return {
    ...base('validating', kind, spec),
    async handle(request) {
      try {
        const out = await spec.validate(request as AdmissionRequest<T>);
        const reasons = (Array.isArray(out) ? out : out ? [out] : []).filter(Boolean);
        return reasons.length ? deny(request.uid, 403, reasons.join('; ')) : { uid: request.uid, allowed: true };
      } catch (err) {
        return deny(request.uid, 500, `${resourceName(kind)}: the validating webhook failed: ${(err as Error).message}`, 'InternalError');
      }
    },
  };
}

/** Wraps a response in the AdmissionReview the API server expects back. */
export const admissionReview = (response: AdmissionResponse) => ({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response });
