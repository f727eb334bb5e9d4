import { parseLabelSelector, SelectorError } from '@opkit/runtime';

type LabelMatcher = ReturnType<typeof parseLabelSelector>;

/**
 * Who may get certificates on a Gateway they do not own (Gateway API self-service, issue 31): the
 * platform team says so on its Gateway, in three annotations; an application team's HTTPRoute
 * asks, and this decides. Pure, table-tested. Without the annotations nobody may: a Gateway opts
 * in, as Gateway API's own `allowedListeners` defaults to None.
 *
 *   cert.opkit.dev/self-service-namespaces: "tenant=true"        a label selector on the route's namespace
 *   cert.opkit.dev/self-service-hostnames: "*.apps.example.com"  hostnames a route may have certified (comma-separated)
 *   cert.opkit.dev/self-service-issuers: "ClusterIssuer/letsencrypt,Issuer/acme"
 *                                                                 issuers it may name (Issuer/x: in its own namespace)
 */
export const SELF_SERVICE = {
  namespaces: 'cert.opkit.dev/self-service-namespaces',
  hostnames: 'cert.opkit.dev/self-service-hostnames',
  issuers: 'cert.opkit.dev/self-service-issuers',
  /** How many listeners one namespace may have on the Gateway (default 8): a Gateway has 64 at most, shared by every tenant. */
  listenersPerNamespace: 'cert.opkit.dev/self-service-listeners-per-namespace',
  /**
   * The port of the HTTPS listeners made on the Gateway (default 443). Implementations that bind a
   * listener to an entry point of the same port want theirs: Traefik's HTTPS entry point is 8443.
   */
  port: 'cert.opkit.dev/self-service-port',
} as const;

export const DEFAULT_LISTENERS_PER_NAMESPACE = 8;
export const DEFAULT_SELF_SERVICE_PORT = 443;

export interface SelfServicePolicy {
  namespaces: LabelMatcher;
  hostnames: string[];
  issuers: { kind: 'Issuer' | 'ClusterIssuer'; name: string }[];
  listenersPerNamespace: number;
  port: number;
}

/** The Gateway's policy; `undefined` when it offers none; an error string when it is written wrong. */
export function selfServicePolicy(annotations: Record<string, string> | undefined): SelfServicePolicy | string | undefined {
  const ns = annotations?.[SELF_SERVICE.namespaces];
  if (ns === undefined) return undefined;
  let namespaces: LabelMatcher;
  try {
    namespaces = parseLabelSelector(ns);
  } catch (err) {
    if (err instanceof SelectorError) return `${SELF_SERVICE.namespaces}: ${err.message}`;
    throw err;
  }
  const list = (k: string) =>
    (annotations?.[k] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  const hostnames = list(SELF_SERVICE.hostnames).map((h) => h.toLowerCase());
  const badHost = hostnames.find((h) => !/^(\*\.)?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/.test(h));
  if (badHost !== undefined) return `${SELF_SERVICE.hostnames}: "${badHost}" is not a hostname or *.suffix`;
  if (!hostnames.length) return `${SELF_SERVICE.hostnames} names no hostname: say which a route may have certified`;
  const issuers: SelfServicePolicy['issuers'] = [];
  for (const entry of list(SELF_SERVICE.issuers)) {
    const m = /^(Issuer|ClusterIssuer)\/([a-z0-9]([-a-z0-9.]*[a-z0-9])?)$/.exec(entry);
    if (!m) return `${SELF_SERVICE.issuers}: "${entry}" is not Issuer/<name> or ClusterIssuer/<name>`;
    issuers.push({ kind: m[1] as 'Issuer' | 'ClusterIssuer', name: m[2]! });
  }
  if (!issuers.length) return `${SELF_SERVICE.issuers} names no issuer: say which a route may use`;
  const perNs = annotations?.[SELF_SERVICE.listenersPerNamespace];
  const listenersPerNamespace = perNs === undefined ? DEFAULT_LISTENERS_PER_NAMESPACE : Number(perNs);
  if (!/^\d{1,2}$/.test(perNs ?? '0') || listenersPerNamespace > 64) return `${SELF_SERVICE.listenersPerNamespace}: "${perNs}" is not a number from 0 to 64`;
  const portText = annotations?.[SELF_SERVICE.port];
  const port = portText === undefined ? DEFAULT_SELF_SERVICE_PORT : Number(portText);
  if (!/^[1-9]\d{0,4}$/.test(portText ?? '1') || port > 65_535) return `${SELF_SERVICE.port}: "${portText}" is not a port from 1 to 65535`;
  return { namespaces, hostnames, issuers, listenersPerNamespace, port };
}

/**
 * Whether `hostname` is within `pattern`, as a Gateway listener's hostname matches (Gateway API):
 * `*.example.com` is a suffix match (`a.example.com`, `a.b.example.com`, not `example.com`).
 */
export function hostnameWithin(hostname: string, pattern: string): boolean {
  const h = hostname.toLowerCase();
  return pattern.startsWith('*.') ? h.endsWith(pattern.slice(1)) && h.length > pattern.length - 1 : h === pattern;
}

export interface SelfServiceRequest {
  namespaceLabels: Record<string, string> | undefined;
  hostnames: string[];
  issuer: { kind: string; name: string };
}

/**
 * Why the route may not self-serve on this Gateway, or undefined when it may. Every reason names
 * what to change, since it is shown on the route, to a team that cannot read the Gateway's policy
 * unless it may read the Gateway.
 */
export function refusal(policy: SelfServicePolicy | string | undefined, gateway: string, req: SelfServiceRequest): string | undefined {
  if (policy === undefined) return `Gateway ${gateway} does not offer self-service certificates (its owner sets ${SELF_SERVICE.namespaces} and the others)`;
  if (typeof policy === 'string') return `Gateway ${gateway}'s self-service policy is written wrong, ask its owner: ${policy}`;
  if (!policy.namespaces(req.namespaceLabels)) return `this namespace is not one Gateway ${gateway} offers self-service certificates to`;
  if (!req.hostnames.length) return 'the route names no hostnames: a certificate needs at least one';
  const wildcard = req.hostnames.find((h) => h.startsWith('*'));
  if (wildcard) return `the route's hostname ${wildcard} is a wildcard, which HTTP-01 cannot prove: name each host`;
  const outside = req.hostnames.filter((h) => !policy.hostnames.some((p) => hostnameWithin(h, p)));
  if (outside.length) return `Gateway ${gateway} does not offer certificates for ${outside.join(', ')} (it offers ${policy.hostnames.join(', ')})`;
  if (!policy.issuers.some((i) => i.kind === req.issuer.kind && i.name === req.issuer.name))
    return `Gateway ${gateway} does not offer self-service through ${req.issuer.kind} "${req.issuer.name}" (it offers ${policy.issuers.map((i) => `${i.kind}/${i.name}`).join(', ')})`;
  return undefined;
}
