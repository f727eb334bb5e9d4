import { ApiError, defineKind, type ReconcileContext } from '@opkit/runtime';
import type { ChallengeObject } from '../api/acme/v1/challenge.js';
import type { ResolvedIssuer } from '../issuers/resolve.js';
import { DnsError } from './errors.js';

/**
 * cert-manager's DNS webhook solver protocol: every DNS provider cert-manager does not build in
 * (Cloudflare's tunnels, Hetzner, OVH, Gandi, Infoblox…) ships as an aggregated API server that
 * serves one virtual resource per solver, `POST /apis/<groupName>/v1alpha1/<solverName>` taking a
 * ChallengePayload (`webhook.acme.cert-manager.io/v1alpha1`, pkg/acme/webhook/apis/acme/v1alpha1)
 * and answering it with a response. The API server's aggregation layer authenticates the caller
 * (this operator's ServiceAccount) and authorizes `create` on that resource; the solver then reads
 * its config's Secrets from `resourceNamespace`.
 */

/** An issuer's `dns01.webhook`. */
export interface WebhookSolverRef {
  groupName: string;
  solverName: string;
  config?: unknown;
}

/** cert-manager's ChallengeRequest, field for field (json names as its Go type has them). */
export interface ChallengeRequest {
  uid: string;
  action: 'Present' | 'CleanUp';
  type: 'dns-01';
  dnsName: string;
  key: string;
  resourceNamespace: string;
  /** The TXT record's name, fully qualified with its final dot, as cert-manager sends it. */
  resolvedFQDN: string;
  /** The zone it is in, fully qualified with its final dot. */
  resolvedZone: string;
  allowAmbientCredentials: boolean;
  config?: unknown;
}

/** The payload's type is cert-manager's, whatever group the solver serves it in. */
const PAYLOAD_TYPE = { apiVersion: 'webhook.acme.cert-manager.io/v1alpha1', kind: 'ChallengePayload' } as const;

/** What is sent; the answer adds `response: { uid, success, status: { message } }`. */
interface ChallengePayload {
  apiVersion: string;
  kind: string;
  request: ChallengeRequest;
}

/** A DNS webhook solver that could not be reached, refused the call, or failed to do it. */
export class WebhookSolverError extends DnsError {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookSolverError';
  }
}

/**
 * The request cert-manager's controller sends for a challenge (pkg/issuer/acme/dns, webhook.go):
 * only the issuer's inner `config`, the resolved names fully qualified. One addition: the
 * Challenge's uid (cert-manager leaves it empty), which solvers echo and may log.
 */
export function challengeRequest(
  ch: ChallengeObject,
  action: ChallengeRequest['action'],
  recordName: string,
  zone: string,
  issuer: Pick<ResolvedIssuer, 'kind' | 'resourceNamespace'>,
): ChallengeRequest {
  const hook = ch.spec.solver.dns01!.webhook!;
  return {
    uid: ch.metadata.uid ?? '',
    action,
    type: 'dns-01',
    dnsName: ch.spec.dnsName,
    key: ch.spec.key,
    resourceNamespace: issuer.resourceNamespace,
    resolvedFQDN: `${recordName}.`,
    resolvedZone: `${zone}.`,
    // cert-manager's defaults: ambient credentials for ClusterIssuers, not for Issuers.
    allowAmbientCredentials: issuer.kind === 'ClusterIssuer',
    ...(hook.config === undefined ? {} : { config: hook.config }),
  };
}

/**
 * What a solver or the API server said, bounded: it ends up in the Challenge's, the Order's and the
 * Certificate's status, and a solver answering a megabyte must not make those writes fail.
 */
const MAX_SAID = 512;
const clip = (said: unknown): string => {
  const text = typeof said === 'string' ? said : String(JSON.stringify(said));
  return text.length > MAX_SAID ? `${text.slice(0, MAX_SAID - 1)}…` : text;
};

const field = (o: unknown, key: string): unknown => (typeof o === 'object' && o !== null ? (o as Record<string, unknown>)[key] : undefined);

/** Calls the solver; resolves when it reports success, else throws what it (or the API server) said. */
export async function callWebhookSolver(ctx: Pick<ReconcileContext, 'call'>, hook: WebhookSolverRef, request: ChallengeRequest): Promise<void> {
  const solver = `the DNS webhook solver ${hook.solverName} (${hook.groupName})`;
  const kind = defineKind({ group: hook.groupName, version: 'v1alpha1', kind: 'ChallengePayload', plural: hook.solverName, namespaced: false });
  // The answer is read as untrusted JSON, whatever its declared type.
  let answer: unknown;
  try {
    answer = await ctx.call<ChallengePayload, unknown>(kind, { ...PAYLOAD_TYPE, request });
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    const said = clip(err.serverMessage);
    if (err.status === 404)
      throw new WebhookSolverError(`${solver} is not served by the API server (no APIService v1alpha1.${hook.groupName}, or no solver of that name): ${said}`);
    if (err.status === 503) throw new WebhookSolverError(`${solver} is registered but not available (APIService v1alpha1.${hook.groupName}): ${said}`);
    if (err.status === 403)
      throw new WebhookSolverError(
        `this operator may not call ${solver}: grant its ServiceAccount create on ${hook.solverName}.${hook.groupName} (a solver's chart does, told the operator's ServiceAccount): ${said}`,
      );
    throw new WebhookSolverError(`${solver} answered ${err.status}: ${said}`);
  }
  // Success is the answer's own `true`, nothing else.
  const response = field(answer, 'response');
  if (field(response, 'success') === true) return;
  const message = field(field(response, 'status'), 'message');
  const what = request.action === 'Present' ? 'present' : 'clean up';
  throw new WebhookSolverError(
    `${solver} could not ${what} the TXT record ${request.resolvedFQDN.replace(/\.$/, '')}: ${message ? clip(message) : 'it did not succeed and gave no reason'}`,
  );
}
