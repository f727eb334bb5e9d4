import { defineKind, type KubeObject, type LabelSelector } from '@opkit/runtime';
import { SOLVER_OVERRIDES } from '../acme/solver-overrides.js';
import { hasShimTrigger, issuerFromAnnotations, shimReadable, specFromAnnotations, type ShimOptions } from './annotations.js';
import { shimCertificate, type DesiredCertificate, type ShimPlan } from './ingress.js';

/** Gateway API's group: its Gateways, routes, ListenerSets and grants. */
export const GATEWAY_GROUP = 'gateway.networking.k8s.io';

/**
 * Where a Gateway API parent reference points, when it names a `kind` of Gateway API's own group
 * (Gateway API's defaults: the Gateway kind, the referring object's namespace).
 */
export function parentOfKind(
  ref: { group?: string; kind?: string; namespace?: string; name: string },
  kind: string,
  namespace: string,
): { namespace: string; name: string } | undefined {
  if ((ref.group ?? GATEWAY_GROUP) !== GATEWAY_GROUP || (ref.kind ?? 'Gateway') !== kind) return undefined;
  return { namespace: ref.namespace ?? namespace, name: ref.name };
}

export interface Listener {
  name: string;
  hostname?: string;
  port?: number;
  protocol: string;
  tls?: { mode?: string; certificateRefs?: { name: string; namespace?: string; kind?: string; group?: string }[] };
}

export type GatewayObject = KubeObject & {
  metadata: { name: string; namespace: string };
  spec: {
    gatewayClassName?: string;
    listeners?: Listener[];
    /** Which namespaces' ListenerSets may attach (Gateway API v1.5; absent: none). */
    allowedListeners?: { namespaces?: { from?: 'All' | 'Selector' | 'Same' | 'None'; selector?: LabelSelector } };
  };
};

export const Gateway = defineKind<GatewayObject>({ group: GATEWAY_GROUP, version: 'v1', kind: 'Gateway', plural: 'gateways', namespaced: true });

/** Listeners that terminate TLS: HTTPS and TLS, in Terminate mode (Passthrough carries no certificate). */
const terminatesTls = (l: Listener) => (l.protocol === 'HTTPS' || l.protocol === 'TLS') && l.tls?.mode !== 'Passthrough';

/** What is wrong with a TLS listener, as cert-manager's gateway-shim says it (the listener is skipped). */
function listenerProblems(l: Listener, i: number, namespace: string): string[] {
  const at = `spec.listeners[${i}]`;
  const problems: string[] = [];
  if (!l.hostname) problems.push(`${at}.hostname: Required value: the hostname cannot be empty`);
  if (!l.tls) return [...problems, `${at}.tls: Required value: the TLS block cannot be empty`];
  if (!l.tls.certificateRefs?.length) problems.push(`${at}.tls.certificateRef: Required value: listener has no certificateRefs`);
  for (const [j, r] of (l.tls.certificateRefs ?? []).entries()) {
    if (r.group && r.group !== 'core') problems.push(`${at}.tls.certificateRef[${j}].group: Unsupported value: "${r.group}": supported values: "core", ""`);
    if (r.kind && r.kind !== 'Secret') problems.push(`${at}.tls.certificateRef[${j}].kind: Unsupported value: "${r.kind}": supported values: "Secret", ""`);
    if (r.namespace && r.namespace !== namespace)
      problems.push(
        `${at}.tls.certificateRef[${j}].namespace: Invalid value: "${r.namespace}": cross-namespace secret references are not allowed in listeners`,
      );
  }
  return problems;
}

/**
 * The Secrets a list of listeners (a Gateway's, a ListenerSet's) references from its TLS
 * listeners, each with the hostnames of every listener that uses it; a listener that cannot be
 * served is skipped with a reason.
 */
export function tlsListenerHosts(listeners: Listener[], namespace: string): { hosts: Map<string, string[]>; skipped: string[] } {
  const skipped: string[] = [];
  const hosts = new Map<string, string[]>();
  for (const [i, l] of listeners.entries()) {
    if (!terminatesTls(l)) continue;
    const wrong = listenerProblems(l, i, namespace);
    if (wrong.length) {
      skipped.push(`Skipped a listener block: ${wrong.join(', ')}`);
      continue;
    }
    for (const ref of l.tls!.certificateRefs!) hosts.set(ref.name, [...(hosts.get(ref.name) ?? []), l.hostname!]);
  }
  return { hosts, skipped };
}

/**
 * gateway-shim: what an annotated Gateway asks for. One Certificate per Secret its TLS listeners
 * reference, with the hostnames of every listener that uses it; a listener that cannot be served
 * is skipped with a reason. The ACME solver is pointed at this Gateway (its HTTPRoute's parent).
 */
export function planForGateway(gw: GatewayObject, opts: ShimOptions = {}): ShimPlan {
  const a = shimReadable(gw.metadata.annotations, opts);
  if (!hasShimTrigger(a)) return { skip: true };
  const issuer = issuerFromAnnotations(a, opts.defaultIssuer);
  if ('problem' in issuer) return { blocked: `Could not determine the issuer: ${issuer.problem}` };
  const { spec, problems } = specFromAnnotations(a);
  if (problems.length) return { blocked: problems.join('; ') };
  const { hosts, skipped } = tlsListenerHosts(gw.spec.listeners ?? [], gw.metadata.namespace);
  const overrides = { [SOLVER_OVERRIDES.parentRefKind]: 'Gateway', [SOLVER_OVERRIDES.parentRefName]: gw.metadata.name };
  const certificates: DesiredCertificate[] = [...hosts].map(([secretName, names]) => shimCertificate(Gateway, gw, secretName, names, issuer, spec, overrides));
  return { certificates, secretNames: [...hosts.keys()], skipped };
}
