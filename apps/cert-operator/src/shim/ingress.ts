import { isIP } from 'node:net';
import { controllerReference, Ingress, type Kind, type KubeObject, type ObjectOf } from '@opkit/runtime';
import type { CertificateSpecType } from '../api/v1/certificate.js';
import {
  hasShimTrigger,
  issuerFromAnnotations,
  shimAnnotation,
  shimReadable,
  SOLVER_OVERRIDES,
  specFromAnnotations,
  type IssuerChoice,
  type ShimOptions,
} from './annotations.js';

export type IngressObject = ObjectOf<typeof Ingress> & { metadata: { name: string; namespace: string; uid?: string } };

/** A Certificate a shim wants, as it would be applied. */
export interface DesiredCertificate {
  kind: 'Certificate';
  metadata: {
    name: string;
    namespace: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences: ReturnType<typeof controllerReference>[];
  };
  spec: CertificateSpecType;
}

export type ShimPlan =
  | { skip: true }
  /** Nothing can be built: the object's annotations or TLS entries are wrong. Said as a Warning, nothing changed. */
  | { blocked: string }
  | { certificates: DesiredCertificate[]; secretNames: string[]; skipped: string[] };

const APPLYSET = 'applyset.kubernetes.io/part-of';

/** Hosts split into DNS names and IP addresses, each once (IPs compared by value). */
export function splitHosts(hosts: string[]): { dnsNames: string[]; ipAddresses: string[] } {
  const dnsNames = [...new Set(hosts.filter((h) => !isIP(h)))];
  const seen = new Set<string>();
  const ipAddresses: string[] = [];
  for (const h of hosts.filter((x) => isIP(x))) {
    const key = isIP(h) === 6 ? new URL(`http://[${h}]/`).hostname : h;
    if (!seen.has(key)) {
      seen.add(key);
      ipAddresses.push(h);
    }
  }
  return { dnsNames, ipAddresses };
}

/**
 * The Certificate for one TLS secret of an Ingress-like object: named after the Secret, the
 * object's labels, owned by the object, the issuer and the cert-manager annotations translated.
 */
export function shimCertificate(
  ownerKind: Kind,
  owner: KubeObject & { metadata: { name: string; namespace: string } },
  secretName: string,
  hosts: string[],
  issuer: IssuerChoice,
  fromAnnotations: Partial<CertificateSpecType>,
  annotations: Record<string, string>,
): DesiredCertificate {
  const { dnsNames, ipAddresses } = splitHosts([...hosts, ...(fromAnnotations.dnsNames ?? []), ...(fromAnnotations.ipAddresses ?? [])]);
  const { [APPLYSET]: _applyset, ...labels } = owner.metadata.labels ?? {};
  return {
    // apiVersion: the client writes the Certificate kind's (the API mode's group).
    kind: 'Certificate',
    metadata: {
      name: secretName,
      namespace: owner.metadata.namespace,
      ...(Object.keys(labels).length ? { labels } : {}),
      ...(Object.keys(annotations).length ? { annotations } : {}),
      ownerReferences: [controllerReference(ownerKind, owner)],
    },
    spec: {
      usages: ['digital signature', 'key encipherment'],
      ...fromAnnotations,
      secretName,
      ...(dnsNames.length ? { dnsNames } : {}),
      ...(ipAddresses.length ? { ipAddresses } : {}),
      issuerRef: { name: issuer.name, kind: issuer.kind, ...(issuer.group ? { group: issuer.group } : {}) },
    } as CertificateSpecType,
  };
}

/** ACME HTTP-01 solver overrides from an Ingress's annotations, as cert-manager's ingress-shim sets them. */
function solverOverrides(ing: IngressObject, a: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (shimAnnotation(a, 'http01-edit-in-place', true) === 'true') out[SOLVER_OVERRIDES.ingressName] = ing.metadata.name;
  const cls = shimAnnotation(a, 'http01-ingress-class', true);
  if (cls) out[SOLVER_OVERRIDES.ingressClass] = cls;
  const clsName = shimAnnotation(a, 'http01-ingress-ingressclassname', true);
  if (clsName) out[SOLVER_OVERRIDES.ingressClassName] = clsName;
  return out;
}

/**
 * ingress-shim: what an annotated Ingress asks for. One Certificate per TLS entry (named after its
 * secretName, its hosts as SANs); two entries sharing a secretName block the whole Ingress, as in
 * cert-manager (one Certificate per Secret); an entry without hosts or secretName is skipped.
 */
export function planForIngress(ing: IngressObject, opts: ShimOptions = {}): ShimPlan {
  const a = shimReadable(ing.metadata.annotations, opts);
  if (!hasShimTrigger(a)) return { skip: true };
  const issuer = issuerFromAnnotations(a, opts.defaultIssuer);
  if ('problem' in issuer) return { blocked: `Could not determine the issuer: ${issuer.problem}` };
  const tls = ing.spec?.tls ?? [];
  const first = new Map<string, number>();
  for (const [i, t] of tls.entries()) {
    if (!t.secretName) continue;
    const j = first.get(t.secretName);
    if (j !== undefined)
      return { blocked: `spec.tls[${j}].secretName: "${t.secretName}" must only appear in a single TLS entry but is also used in spec.tls[${i}].secretName` };
    first.set(t.secretName, i);
  }
  const { spec, problems } = specFromAnnotations(a);
  if (problems.length) return { blocked: problems.join('; ') };
  const skipped: string[] = [];
  const certificates: DesiredCertificate[] = [];
  const overrides = solverOverrides(ing, a);
  for (const [i, t] of tls.entries()) {
    const missing = [...(t.hosts?.length ? [] : [`spec.tls[${i}].hosts`]), ...(t.secretName ? [] : [`spec.tls[${i}].secretName`])];
    if (missing.length) {
      skipped.push(`Skipped a TLS block: ${missing.join(', ')}: Required value`);
      continue;
    }
    certificates.push(shimCertificate(Ingress, ing, t.secretName!, t.hosts!, issuer, spec, overrides));
  }
  return { certificates, secretNames: tls.map((t) => t.secretName).filter((n): n is string => !!n), skipped };
}
