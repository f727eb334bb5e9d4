import { isIP } from 'node:net';
import { parseDuration } from '@opkit/runtime';
import type { CertificateSpecType } from '../api/v1/certificate.js';
import { API_GROUPS } from '../api/groups.js';
import { KEY_USAGES, type KeyUsage } from '../api/v1/shared.js';

/**
 * The annotations the certificate shims read from Ingresses and Gateways. cert-manager's names are
 * the documented ones (teams porting from cert-manager keep their manifests); each also works
 * under this operator's domain, which wins when both are set (in either API mode: the shims read
 * Ingresses and Gateways, whose annotations do not change with the mode).
 */
const CM = 'cert-manager.io';
const ACME_CM = 'acme.cert-manager.io';
const OURS = API_GROUPS.opkit.cert;
const ACME_OURS = API_GROUPS.opkit.acme;

/** How the shims read an object's annotations. */
export interface ShimOptions {
  /** The issuer for objects annotated only kubernetes.io/tls-acme: "true". */
  defaultIssuer?: IssuerChoice;
  /**
   * Read only this operator's annotations, not cert-manager's (`--shim-ignore-cert-manager-annotations`):
   * while cert-manager still runs beside it, each shim acts on its own annotations only, so the two
   * never make Certificates for the same Secret.
   */
  ignoreCertManagerAnnotations?: boolean;
}

/** The annotations a shim reads: all of them, or without cert-manager's when it is told to leave those to cert-manager. */
export function shimReadable(annotations: Record<string, string> | undefined, opts: ShimOptions): Record<string, string> | undefined {
  if (!opts.ignoreCertManagerAnnotations || !annotations) return annotations;
  return Object.fromEntries(Object.entries(annotations).filter(([k]) => !k.startsWith(`${CM}/`) && !k.startsWith(`${ACME_CM}/`)));
}

/** The value of a shim annotation, ours first, then cert-manager's. */
export function shimAnnotation(annotations: Record<string, string> | undefined, name: string, acme = false): string | undefined {
  return annotations?.[`${acme ? ACME_OURS : OURS}/${name}`] ?? annotations?.[`${acme ? ACME_CM : CM}/${name}`];
}

export const TRIGGERS = ['issuer', 'cluster-issuer'];
export const TLS_ACME = 'kubernetes.io/tls-acme';

export { SOLVER_OVERRIDES } from '../acme/solver-overrides.js';

export interface IssuerChoice {
  name: string;
  kind: string;
  group?: string;
}

/** Which issuer: `issuer` or `cluster-issuer` (never both), with `issuer-kind`/`issuer-group` for external issuers; else the operator's default for tls-acme. */
export function issuerFromAnnotations(a: Record<string, string> | undefined, defaults?: IssuerChoice): IssuerChoice | { problem: string } {
  const issuer = shimAnnotation(a, 'issuer');
  const clusterIssuer = shimAnnotation(a, 'cluster-issuer');
  const kind = shimAnnotation(a, 'issuer-kind');
  const group = shimAnnotation(a, 'issuer-group');
  if (issuer && clusterIssuer) return { problem: `both ${CM}/issuer and ${CM}/cluster-issuer are set: choose one` };
  if (clusterIssuer) {
    if (kind || group) return { problem: `${CM}/issuer-kind and ${CM}/issuer-group go with ${CM}/issuer, not ${CM}/cluster-issuer` };
    return { name: clusterIssuer, kind: 'ClusterIssuer' };
  }
  if (issuer) return { name: issuer, kind: kind || 'Issuer', ...(group ? { group } : {}) };
  if (a?.[TLS_ACME] === 'true') {
    if (!defaults)
      return {
        problem: `${TLS_ACME} is set, but the operator has no default issuer (--default-issuer-name): name one with ${CM}/issuer or ${CM}/cluster-issuer`,
      };
    return defaults;
  }
  return { problem: 'no issuer annotation' };
}

export const hasShimTrigger = (a: Record<string, string> | undefined) => TRIGGERS.some((t) => shimAnnotation(a, t) !== undefined) || a?.[TLS_ACME] === 'true';

const list = (v: string) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

type Spec = Partial<CertificateSpecType>;

/**
 * cert-manager's Certificate annotations on an Ingress or Gateway, as a partial Certificate spec.
 * A value that cannot be used is a problem (said on the object as a Warning event), never ignored.
 */
export function specFromAnnotations(a: Record<string, string> | undefined): { spec: Spec; problems: string[] } {
  const spec: Spec = {};
  const problems: string[] = [];
  const get = (n: string) => shimAnnotation(a, n);
  const subject: NonNullable<Spec['subject']> = {};
  const cn = get('common-name');
  if (cn) spec.commonName = cn;
  const sans = get('alt-names');
  if (sans) spec.dnsNames = list(sans);
  const ips = get('ip-sans');
  if (ips) {
    spec.ipAddresses = list(ips);
    for (const ip of spec.ipAddresses) if (!isIP(ip)) problems.push(`${CM}/ip-sans: "${ip}" is not an IP address`);
  }
  const uris = get('uri-sans');
  if (uris) spec.uris = list(uris);
  const emails = get('email-sans');
  if (emails) spec.emailAddresses = list(emails);
  for (const [annotation, field] of [
    ['subject-organizations', 'organizations'],
    ['subject-organizationalunits', 'organizationalUnits'],
    ['subject-countries', 'countries'],
    ['subject-provinces', 'provinces'],
    ['subject-localities', 'localities'],
    ['subject-postalcodes', 'postalCodes'],
    ['subject-streetaddresses', 'streetAddresses'],
  ] as const) {
    const v = get(annotation);
    if (v) subject[field] = list(v);
  }
  const serial = get('subject-serialnumber');
  if (serial) subject.serialNumber = serial;
  if (Object.keys(subject).length) spec.subject = subject;
  for (const [annotation, field] of [
    ['duration', 'duration'],
    ['renew-before', 'renewBefore'],
  ] as const) {
    const v = get(annotation);
    if (!v) continue;
    try {
      parseDuration(v);
      spec[field] = v;
    } catch (err) {
      problems.push(`${CM}/${annotation}: ${(err as Error).message}`);
    }
  }
  const pct = get('renew-before-percentage');
  if (pct) {
    const n = Number(pct);
    if (Number.isInteger(n) && n >= 1 && n <= 99) spec.renewBeforePercentage = n;
    else problems.push(`${CM}/renew-before-percentage: "${pct}" is not a whole number from 1 to 99`);
  }
  const usages = get('usages');
  if (usages) {
    const u = list(usages);
    const bad = u.filter((x) => !(KEY_USAGES as readonly string[]).includes(x));
    if (bad.length) problems.push(`${CM}/usages: unknown usage ${bad.map((b) => `"${b}"`).join(', ')}`);
    else spec.usages = u as KeyUsage[];
  }
  const limit = get('revision-history-limit');
  if (limit) {
    const n = Number(limit);
    if (Number.isInteger(n) && n >= 1) spec.revisionHistoryLimit = n;
    else problems.push(`${CM}/revision-history-limit: "${limit}" is not a whole number of at least 1`);
  }
  const pk: NonNullable<Spec['privateKey']> = {};
  const alg = get('private-key-algorithm');
  if (alg) {
    if (alg === 'RSA' || alg === 'ECDSA' || alg === 'Ed25519') pk.algorithm = alg;
    else problems.push(`${CM}/private-key-algorithm: "${alg}" is not RSA, ECDSA or Ed25519`);
  }
  const enc = get('private-key-encoding');
  if (enc) {
    if (enc === 'PKCS1' || enc === 'PKCS8') pk.encoding = enc;
    else problems.push(`${CM}/private-key-encoding: "${enc}" is not PKCS1 or PKCS8`);
  }
  const size = get('private-key-size');
  if (size) {
    const n = Number(size);
    if (Number.isInteger(n) && n > 0) pk.size = n;
    else problems.push(`${CM}/private-key-size: "${size}" is not a whole number`);
  }
  const rot = get('private-key-rotation-policy');
  if (rot) {
    if (rot === 'Always' || rot === 'Never') pk.rotationPolicy = rot;
    else problems.push(`${CM}/private-key-rotation-policy: "${rot}" is not Always or Never`);
  }
  if (Object.keys(pk).length) spec.privateKey = pk;
  const template = get('secret-template');
  if (template) {
    try {
      const parsed = JSON.parse(template) as unknown;
      if (typeof parsed !== 'object' || !parsed || Array.isArray(parsed)) throw new Error('not an object');
      const t = parsed as { labels?: Record<string, string>; annotations?: Record<string, string> };
      spec.secretTemplate = { ...(t.labels ? { labels: t.labels } : {}), ...(t.annotations ? { annotations: t.annotations } : {}) };
    } catch (err) {
      problems.push(`${CM}/secret-template: not a JSON object with labels and annotations (${(err as Error).message})`);
    }
  }
  return { spec, problems };
}
