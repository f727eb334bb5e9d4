import { parseDuration } from '@opkit/runtime';
import { DEFAULT_DURATION, type CertificateObject, type CertificateSpecType } from '../../api/v1/certificate.js';
import type { CertificateRequestObject } from '../../api/v1/certificaterequest.js';
import { annotationIn, sameIssuerGroup, type ApiGroups } from '../../api/groups.js';
import type { KeyUsage } from '../../api/v1/shared.js';
import { csrExtension, literalName, nameOf, OID_NAME_CONSTRAINTS, SUBJECT_ATTRIBUTES, subjectValues, type ParsedCSR } from '../../pki/csr.js';
import { nameConstraintsExtension } from '../../pki/general-names.js';
import { normalizeIP } from '../../pki/ip.js';
import { describeKey, keyLabel, keySpecOf, publicKeyDer } from '../../pki/keys.js';
import { effectiveUsages } from '../../pki/usages.js';
import type { SecretState } from './secret-state.js';
import { renewalPlan, type IssuerRenewal } from './renewal-plan.js';

/**
 * When a Certificate must be issued again, as cert-manager's trigger/policies: an ordered chain of
 * named checks, each a pure function of what the reconcile read. The first to answer wins.
 *
 * The spec is compared with the *request* the current certificate was issued for, not with the
 * certificate: a CA may add what was not asked (Let's Encrypt's classic profile adds a common
 * name), spell it differently (IPv6), or leave out what it does not honour. Only where no request
 * exists (a Secret ported from cert-manager) is the certificate compared, loosely.
 */
export interface TriggerInput {
  /** The API mode's groups: which issuerRefs and annotations are ours. */
  groups: ApiGroups;
  certificate: CertificateObject;
  secret: SecretState;
  /** The request of the current revision, with its parsed CSR, if it still exists. */
  request?: { cr: CertificateRequestObject; csr: ParsedCSR };
  now: Date;
  /** The issuer's own renewal settings (windows, a pause), when it is one of ours. */
  issuer?: IssuerRenewal;
}

export interface Trigger {
  reason: TriggerReason;
  message: string;
}

export type TriggerReason =
  | 'DoesNotExist'
  | 'MissingData'
  | 'InvalidKeyPair'
  | 'InvalidCertificate'
  | 'IncorrectIssuer'
  | 'IncorrectCertificate'
  | 'PrivateKeyChanged'
  | 'SecretMismatch'
  | 'RequestChanged'
  | 'SpecChanged'
  | 'Expired'
  | 'Renewing';

export interface Policy {
  name: string;
  check: (input: TriggerInput) => Trigger | undefined;
}

/** A trigger that leaves the current certificate usable: Ready stays True while it is replaced. */
export const keepsReady = (reason: string) => reason === 'Renewing' || reason === 'ManuallyTriggered';

function sameSet(a: readonly string[] = [], b: readonly string[] = []): boolean {
  if (a.length !== b.length) return false;
  const sb = [...b].sort();
  return [...a].sort().every((x, i) => x === sb[i]);
}
const lower = (v: readonly string[] = []) => v.map((x) => x.toLowerCase());
const ips = (v: readonly string[] = []) => v.map(normalizeIP);

/** Our annotation on the Secret, or cert-manager's (annotationIn). */
export const secretAnnotation = (groups: ApiGroups, st: SecretState, name: string): string | undefined => annotationIn(groups, st.secret, name);

const sameDuration = (a: string, b: string) => {
  try {
    return parseDuration(a) === parseDuration(b);
  } catch {
    return a === b;
  }
};

/** The spec fields a request does not match (empty: it asks for exactly what the spec says). */
export function requestMismatches(groups: ApiGroups, spec: CertificateSpecType, cr: CertificateRequestObject, csr: ParsedCSR): string[] {
  const out: string[] = [];
  // literalSubject replaces commonName and subject: the whole name is compared instead.
  const literal = spec.literalSubject;
  if (literal && literalName(literal).toString() !== nameOf(csr.subjectDer).toString()) out.push('spec.literalSubject');
  if (!literal && (spec.commonName || undefined) !== (csr.commonName || undefined)) out.push('spec.commonName');
  if (!sameSet(spec.dnsNames, csr.dnsNames)) out.push('spec.dnsNames');
  if (!sameSet(ips(spec.ipAddresses), ips(csr.ipAddresses))) out.push('spec.ipAddresses');
  if (!sameSet(spec.uris, csr.uris)) out.push('spec.uris');
  if (!sameSet(spec.emailAddresses, csr.emailAddresses)) out.push('spec.emailAddresses');
  const other = (list: { oid: string; utf8Value: string }[] | undefined) => (list ?? []).map((o) => `${o.oid}=${o.utf8Value}`);
  if (!sameSet(other(spec.otherNames), other(csr.otherNames))) out.push('spec.otherNames');
  if (!literal)
    for (const [f] of SUBJECT_ATTRIBUTES) if (!sameSet(subjectValues(spec.subject, f), subjectValues(csr.subjectFields, f))) out.push(`spec.subject.${f}`);
  const wantNc = spec.isCA && spec.nameConstraints ? Buffer.from(nameConstraintsExtension(spec.nameConstraints).rawData).toString('hex') : undefined;
  const haveNc = csrExtension(csr, OID_NAME_CONSTRAINTS);
  if (wantNc !== (haveNc ? Buffer.from(haveNc.rawData).toString('hex') : undefined)) out.push('spec.nameConstraints');
  // Usages are compared on the request (below); whether the CSR carries them is a choice of its own.
  const encoded = csr.extensions.some((e) => e.type === '2.5.29.15' || e.type === '2.5.29.37');
  if ((spec.encodeUsagesInRequest ?? true) !== encoded) out.push('spec.encodeUsagesInRequest');
  if (!!spec.isCA !== !!cr.spec.isCA) out.push('spec.isCA');
  // The request holds the usages as written (older requests of ours: the effective ones): both
  // sides compared with the defaults filled in and cert sign added for a CA.
  if (!sameSet(effectiveUsages(spec.usages as KeyUsage[] | undefined, spec.isCA), effectiveUsages(cr.spec.usages, cr.spec.isCA))) out.push('spec.usages');
  // Compared as durations: `720h` and Go's `720h0m0s` (what cert-manager writes) are the same.
  if (!sameDuration(spec.duration ?? DEFAULT_DURATION, cr.spec.duration ?? DEFAULT_DURATION)) out.push('spec.duration');
  if (
    spec.issuerRef.name !== cr.spec.issuerRef.name ||
    (spec.issuerRef.kind || 'Issuer') !== (cr.spec.issuerRef.kind || 'Issuer') ||
    !sameIssuerGroup(groups, spec.issuerRef.group, cr.spec.issuerRef.group)
  ) {
    out.push('spec.issuerRef');
  }
  const want = keySpecOf(spec.privateKey);
  const have = describeKey(csr.publicKey);
  if (want.algorithm !== have.algorithm || want.size !== have.size) out.push('spec.privateKey');
  return out;
}

/**
 * Without a request, the certificate itself, loosely: the names must be the spec's, but a common
 * name the CA added is fine when it is one of the names.
 */
function certificateMismatches(spec: CertificateSpecType, st: SecretState): string[] {
  const cert = st.cert!;
  const out: string[] = [];
  const sans = [...cert.dnsNames, ...cert.ipAddresses, ...cert.uris, ...cert.emailAddresses];
  if (spec.literalSubject) {
    if (literalName(spec.literalSubject).toString() !== cert.subjectName.toString()) out.push('spec.literalSubject');
  } else if (spec.commonName ? cert.commonName !== spec.commonName : !!cert.commonName && !sans.includes(cert.commonName)) out.push('spec.commonName');
  if (!sameSet(lower(spec.dnsNames), lower(cert.dnsNames))) out.push('spec.dnsNames');
  if (!sameSet(ips(spec.ipAddresses), ips(cert.ipAddresses))) out.push('spec.ipAddresses');
  if (!sameSet(spec.uris, cert.uris)) out.push('spec.uris');
  if (!sameSet(spec.emailAddresses, cert.emailAddresses)) out.push('spec.emailAddresses');
  if (!!spec.isCA !== cert.isCA) out.push('spec.isCA');
  return out;
}

/**
 * The Secret holds exactly the certificate the current request was issued: what its annotations
 * say no longer matters (the request names the issuer and the Certificate, and RequestChanged
 * compares them with the spec). Another tool that edits the annotations gets them repaired, not a
 * new certificate per edit.
 */
const holdsIssuedPair = ({ secret, request }: TriggerInput): boolean =>
  !!request?.cr.status?.certificate && Buffer.from(request.cr.status.certificate, 'base64').toString() === secret.certPem;

/** cert-manager's trigger chain, in its order. */
export const TRIGGER_POLICIES: readonly Policy[] = [
  { name: 'SecretProblem', check: ({ secret }) => secret.problem && { reason: secret.problem.reason as TriggerReason, message: secret.problem.message } },
  {
    name: 'SecretIssuerAnnotationsMismatch',
    check: (input) => {
      const { certificate: c, secret, groups } = input;
      if (holdsIssuedPair(input)) return undefined;
      const name = secretAnnotation(groups, secret, 'issuer-name');
      const kind = secretAnnotation(groups, secret, 'issuer-kind');
      const group = secretAnnotation(groups, secret, 'issuer-group');
      const want = c.spec.issuerRef.kind || 'Issuer';
      if (name === c.spec.issuerRef.name && kind === want && sameIssuerGroup(groups, group, c.spec.issuerRef.group)) return undefined;
      return {
        reason: 'IncorrectIssuer',
        message: `Issuing certificate as Secret was previously issued by ${kind ?? '?'} "${name ?? '?'}", not ${want} "${c.spec.issuerRef.name}"`,
      };
    },
  },
  {
    name: 'SecretCertificateNameAnnotationsMismatch',
    check: (input) => {
      const { certificate: c, secret, groups } = input;
      if (holdsIssuedPair(input)) return undefined;
      const owner = secretAnnotation(groups, secret, 'certificate-name');
      return owner === c.metadata.name
        ? undefined
        : { reason: 'IncorrectCertificate', message: `Issuing certificate as Secret was previously issued for Certificate "${owner ?? '?'}"` };
    },
  },
  {
    name: 'SecretPrivateKeyMismatchesSpec',
    check: ({ certificate: c, secret }) => {
      const want = keySpecOf(c.spec.privateKey);
      const have = describeKey(secret.key!);
      if (have.algorithm === want.algorithm && have.size === want.size) return undefined;
      return { reason: 'PrivateKeyChanged', message: `Issuing certificate as the private key is ${keyLabel(have)}, not ${keyLabel(want)}` };
    },
  },
  {
    name: 'SecretPublicKeyDiffersFromCurrentCertificateRequest',
    check: ({ secret, request }) =>
      request && !publicKeyDer(secret.key!).equals(publicKeyDer(request.csr.publicKey))
        ? { reason: 'SecretMismatch', message: 'Issuing certificate as the Secret holds a private key that does not match the current CertificateRequest' }
        : undefined,
  },
  {
    name: 'CurrentCertificateRequestMismatchesSpec',
    check: ({ groups, certificate: c, secret, request }) => {
      if (request) {
        const fields = requestMismatches(groups, c.spec, request.cr, request.csr);
        return fields.length
          ? { reason: 'RequestChanged', message: `Fields on existing CertificateRequest resource not up to date: [${fields.join(' ')}]` }
          : undefined;
      }
      const fields = certificateMismatches(c.spec, secret);
      return fields.length
        ? { reason: 'SpecChanged', message: `Issuing certificate as the existing certificate does not match the spec: [${fields.join(' ')}]` }
        : undefined;
    },
  },
  {
    name: 'CurrentCertificateHasExpired',
    check: ({ secret, now }) =>
      secret.cert!.notAfter.getTime() <= now.getTime()
        ? { reason: 'Expired', message: `Issuing certificate as it expired at ${secret.cert!.notAfter.toISOString()}` }
        : undefined,
  },
  {
    name: 'CurrentCertificateNearingExpiry',
    check: ({ certificate: c, secret, now, issuer }) => {
      const plan = renewalPlan(c, secret.cert!, now, issuer);
      if (!plan.at || plan.at.getTime() > now.getTime()) return undefined;
      return { reason: 'Renewing', message: `Renewing certificate as renewal was scheduled at ${plan.at.toISOString()} (${plan.why})` };
    },
  },
];

/** The first policy's answer: why a new certificate must be issued, or undefined when none must. */
export function issuanceReason(input: TriggerInput, chain: readonly Policy[] = TRIGGER_POLICIES): Trigger | undefined {
  for (const p of chain) {
    const t = p.check(input);
    if (t) return t;
  }
  return undefined;
}
