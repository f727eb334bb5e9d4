import type { Static } from '@sinclair/typebox';
import type { Solver } from '../api/v1/acme-issuer.js';

export type SolverSpec = Static<typeof Solver>;

/**
 * The DNS-01 providers implemented here: RFC 2136, and cert-manager's webhook protocol (which
 * reaches every other DNS provider through a solver its vendor ships); cert-manager's other
 * built-in providers are reported on the issuer.
 */
export const DNS01_PROVIDERS = ['rfc2136', 'webhook'];

/**
 * API groups a webhook solver may not name: Kubernetes' own (nothing there serves
 * ChallengePayloads, and the operator's identity must not be pointed at them by a tenant's Issuer).
 */
const RESERVED_GROUP = /(^|\.)(k8s\.io|kubernetes\.io)$/;

/**
 * What is wrong with an issuer's solvers, each a sentence: a DNS-01 provider not implemented here
 * (cert-manager's cloudflare, route53… are kept by the schema so they can be named), or one that
 * is incomplete. Empty when every solver can be used.
 */
export function solverProblems(solvers: readonly SolverSpec[]): string[] {
  const problems: string[] = [];
  solvers.forEach((s, i) => {
    if (!s.dns01) return;
    const providers = Object.keys(s.dns01).filter((k) => k !== 'cnameStrategy');
    const unsupported = providers.filter((p) => !DNS01_PROVIDERS.includes(p));
    if (unsupported.length)
      problems.push(
        `solvers[${i}].dns01: the ${unsupported.join(', ')} DNS-01 provider${unsupported.length > 1 ? 's are' : ' is'} not supported by this operator (rfc2136 is built in; every other provider through its cert-manager DNS webhook solver)`,
      );
    else if (!providers.length) problems.push(`solvers[${i}].dns01: no provider set (rfc2136 or webhook)`);
    else if (providers.length > 1) problems.push(`solvers[${i}].dns01: ${providers.join(' and ')} are both set; a solver has one provider`);
    const w = s.dns01.webhook;
    if (w && !w.groupName) problems.push(`solvers[${i}].dns01.webhook: groupName is required`);
    else if (w && (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/.test(w.groupName) || RESERVED_GROUP.test(w.groupName)))
      problems.push(
        `solvers[${i}].dns01.webhook: groupName ${JSON.stringify(w.groupName)} is not a solver's API group (a DNS name with a dot, not one of Kubernetes')`,
      );
    if (w && !w.solverName) problems.push(`solvers[${i}].dns01.webhook: solverName is required`);
    else if (w && !/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(w.solverName))
      problems.push(`solvers[${i}].dns01.webhook: solverName ${JSON.stringify(w.solverName)} is not a resource name`);
    const r = s.dns01.rfc2136;
    if (r && !!r.tsigKeyName !== !!r.tsigSecretSecretRef) problems.push(`solvers[${i}].dns01.rfc2136: tsigKeyName and tsigSecretSecretRef go together`);
    if (r?.tsigSecretSecretRef && !r.tsigSecretSecretRef.key) problems.push(`solvers[${i}].dns01.rfc2136.tsigSecretSecretRef: key is required`);
  });
  return problems;
}

/**
 * The solver for one identifier, by cert-manager's precedence: an exact `dnsNames` match beats the
 * most specific matching `dnsZones` entry, which beats a solver with no name selector. Within a
 * tier, more matching `matchLabels` wins, then the earlier solver. Labels that do not match rule a
 * solver out; a wildcard name (`*.example.com`, authorized as `example.com`) can only be proven with
 * DNS-01. Undefined when none fits.
 */
export function pickSolver(solvers: readonly SolverSpec[], dnsName: string, labels: Record<string, string> = {}, wildcard = false): SolverSpec | undefined {
  const name = dnsName.replace(/^\*\./, '');
  const asWritten = wildcard ? `*.${name}` : dnsName;
  let best: { s: SolverSpec; tier: number; zone: number; labels: number; index: number } | undefined;
  solvers.forEach((s, index) => {
    if (!(s.http01 && !wildcard) && !s.dns01?.rfc2136 && !s.dns01?.webhook) return;
    const sel = s.selector ?? {};
    const ml = Object.entries(sel.matchLabels ?? {});
    if (!ml.every(([k, v]) => labels[k] === v)) return;
    let tier = 0;
    let zone = 0;
    if (sel.dnsNames?.length) {
      if (!sel.dnsNames.includes(asWritten) && !(!wildcard && sel.dnsNames.includes(name))) return;
      tier = 2;
    } else if (sel.dnsZones?.length) {
      const zones = sel.dnsZones.filter((z) => name === z || name.endsWith(`.${z}`));
      if (!zones.length) return;
      tier = 1;
      zone = Math.max(...zones.map((z) => z.length));
    }
    const cand = { s, tier, zone, labels: ml.length, index };
    if (!best || cand.tier > best.tier || (cand.tier === best.tier && (cand.zone > best.zone || (cand.zone === best.zone && cand.labels > best.labels))))
      best = cand;
  });
  return best?.s;
}
