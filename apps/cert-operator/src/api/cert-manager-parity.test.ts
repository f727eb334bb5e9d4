import { certManagerCrds } from '@opkit/testing';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { CERT_APIS } from './index.js';
import { stricterThan, type Difference, type Schema } from './schema-diff.js';

/**
 * Is a manifest valid for cert-manager v1.21 valid for opkit in cert-manager mode? Our CRDs (the
 * same TypeBox definitions, in cert-manager's groups) against the CRDs cert-manager's Go module
 * ships, field by field: every way ours is stricter is listed, and each must have a reason here.
 * A field cert-manager accepts that ours would prune or refuse ("missing", "type", an enum) has no
 * accepted reason but one: so adding a field to cert-manager's CRDs fails this test until ours
 * takes it too.
 *
 * "Stricter than the CRD" is not "stricter than cert-manager": cert-manager's admission webhook
 * refuses much that its CRDs let through (internal/apis/*\/validation in its module). Those checks
 * are CEL rules here, so they refuse at apply time without a webhook on the path.
 */
const WEBHOOK = "cert-manager's admission webhook refuses the same (its internal/apis/.../validation)";
const BOUND =
  "a bound on what one tenant's object makes the operator do on its single event loop (docs/security.md, the hostile-tenants test), far above real use; cert-manager has none";
const REASONS: { match: RegExp; why: string }[] = [
  { match: / status\./, why: 'status: written by the controller (ours, or cert-manager before the takeover), never by a manifest' },
  // cert-manager's webhook, as CEL rules and schema constraints.
  { match: /^rule spec: \[has\(self\.selfSigned\)/, why: `${WEBHOOK}: "may not specify more than one issuer type"` },
  { match: /^rule spec(\.acme\.solvers\[\]|\.solver): has\(self\.http01\) != has\(self\.dns01\)/, why: `${WEBHOOK}: one solver type per solver` },
  { match: /^rule spec(\.acme\.solvers\[\]|\.solver)\.http01: /, why: `${WEBHOOK}: one HTTP-01 solver type` },
  { match: /^rule spec(\.acme\.solvers\[\]|\.solver)\.http01\.ingress: /, why: `${WEBHOOK}: "only one of 'ingressClassName', 'name' or 'class'"` },
  { match: /^rule spec(\.acme\.solvers\[\]|\.solver)\.dns01\.rfc2136\.tsigAlgorithm: /, why: `${WEBHOOK}: the four TSIG algorithms, in any case` },
  { match: /^rule spec\.acme: !\(has\(self\.skipTLSVerify\)/, why: `${WEBHOOK}: caBundle and skipTLSVerify are mutually exclusive` },
  { match: /^rule spec: (!\(has\(self\.renewBefore\)|has\(self\.commonName\) \|\||!has\(self\.literalSubject\)|!has\(self\.nameConstraints\))/, why: WEBHOOK },
  { match: /^rule spec\.privateKey: /, why: `${WEBHOOK}: RSA 2048–8192, ECDSA 256, 384 or 521` },
  { match: /^rule spec\.keystores\.(jks|pkcs12): /, why: `${WEBHOOK}: exactly one of passwordSecretRef and password` },
  {
    match: /^(required|limit) spec\.keystores\.(jks|pkcs12)\.(password|passwordSecretRef)/,
    why: `${WEBHOOK}: a keystore password, literal or from a Secret key, must not be empty`,
  },
  {
    match: /^limit spec\.keystores\.jks\.alias: minLength 1/,
    why: 'an empty alias names no key entry; cert-manager writes "certificate" then, as we do when it is unset',
  },
  { match: /^rule spec: self == oldSelf \(spec is immutable: create a new CertificateRequest/, why: `${WEBHOOK}: a CertificateRequest's spec is immutable` },
  {
    match: /^rule spec: self == oldSelf \(spec is immutable\)/,
    why: `${WEBHOOK} for a Challenge's spec; an Order's is written once by its controller (cert-manager's included) and never changed`,
  },
  { match: /^required \.: spec/, why: `${WEBHOOK}: without a spec there is no secretName (Certificate) or request (CertificateRequest)` },
  { match: /^(required|pattern|limit) spec\.otherNames\[\]/, why: `${WEBHOOK}: an otherName needs a dotted OID and a non-empty value` },
  { match: /^limit spec\.(secretName|issuerRef\.name|request|literalSubject|ca\.secretName): minLength 1/, why: `${WEBHOOK}: "must be specified"` },
  { match: /^limit spec\.renewBeforePercentage: (minimum|maximum)/, why: `${WEBHOOK}: the percentage must leave a renewBefore inside the lifetime` },
  { match: /^limit spec\.revisionHistoryLimit: minimum 1/, why: `${WEBHOOK}: "must not be less than 1"` },
  // Go durations: cert-manager decodes them with time.ParseDuration and refuses what does not parse.
  {
    match: /^(pattern|limit) spec\.(duration|renewBefore|acme\.solvers\[\]\.waitInsteadOfSelfCheck|solver\.waitInsteadOfSelfCheck): /,
    why: "Go's duration syntax, which cert-manager's webhook decodes: what does not parse is refused there too (a negative or bare-zero duration also falls below its minimum)",
  },
  // Names of things that must exist to be used.
  {
    match:
      /^limit spec\.(acme\.(privateKeySecretRef\.name|externalAccountBinding\.(keyID|keySecretRef\.name))|(acme\.solvers\[\]|solver)\.dns01\.rfc2136\.(nameserver|tsigSecretSecretRef\.name)): minLength 1/,
    why: 'an empty name names nothing: cert-manager fails the issuer when it reads it, we refuse it on apply',
  },
  {
    match: /^pattern spec\.acme\.server: /,
    why: 'an ACME directory is an http(s) URL: cert-manager fails the issuer when it registers, we refuse it on apply',
  },
  {
    match: /^enum spec(\.acme\.solvers\[\]|\.solver)\.http01\.(ingress|gatewayHTTPRoute)\.serviceType: /,
    why: "the Service types a solver pod can be reached through (NodePort, ClusterIP, LoadBalancer); Kubernetes' only other, ExternalName, routes nowhere near a pod",
  },
  { match: /^limit spec\.commonName: maxLength 64/, why: "X.509's bound on a common name (RFC 5280 ub-common-name): CAs refuse longer ones" },
  { match: /^limit spec\.issuerRef\.name: maxLength 253|^limit spec\.secretName: maxLength 253/, why: "a Kubernetes object name's own bound" },
  {
    match:
      /^limit spec\.(dnsNames|ipAddresses|uris|emailAddresses|otherNames|usages|additionalOutputFormats|subject\.\w+|acme\.solvers|renewal\.windows): maxItems|^limit spec\.(request|renewal\.windows\[\]\.cron): maxLength/,
    why: BOUND,
  },
];

const schemaOf = (crd: { spec: { versions: { name: string; schema: { openAPIV3Schema: Schema } }[] } }): Schema =>
  crd.spec.versions.find((v) => v.name === 'v1')!.schema.openAPIV3Schema;
const key = (d: Difference) => `${d.kind} ${d.path}: ${d.detail}`;

describe("cert-manager mode's CRDs against cert-manager v1.21's", () => {
  const theirs = new Map(
    parseAllDocuments(certManagerCrds())
      .map((d) => d.toJS())
      .filter(Boolean)
      .map((crd) => [crd.metadata.name as string, crd]),
  );
  const ours = CERT_APIS['cert-manager'].resources;
  const all = ours.map((r) => ({ name: r.crd.metadata.name, diff: stricterThan(schemaOf(r.crd as never), schemaOf(theirs.get(r.crd.metadata.name))) }));

  it('serves every CRD cert-manager ships, by the same names', () => {
    expect(ours.map((r) => r.crd.metadata.name).sort()).toEqual([...theirs.keys()].sort());
  });

  it.each(all.map((a) => [a.name, a.diff] as const))('%s: every field cert-manager accepts is ours; each stricter check has its reason', (name, diff) => {
    // The whole list, with reasons: what a reviewer reads when this changes.
    console.log(
      `${name}: ${diff.length} stricter than cert-manager's CRD\n${diff.map((d) => `  ${key(d)}\n    → ${REASONS.find((r) => r.match.test(key(d)))?.why ?? 'NO REASON'}`).join('\n')}`,
    );
    expect(diff.filter((d) => !REASONS.some((r) => r.match.test(key(d)))).map(key)).toEqual([]);
    // Pruned or refused fields are never acceptable.
    expect(diff.filter((d) => d.kind === 'missing' || d.kind === 'type').map(key)).toEqual([]);
  });

  /**
   * The other way round: fields of ours cert-manager's CRDs lack. cert-manager mode runs on
   * cert-manager's own CRDs (it replaces the controller in place), where a write naming one of these
   * is refused: each is listed with why opkit never writes it there.
   */
  const OURS_ONLY: { match: RegExp; why: string }[] = [
    {
      match: /^status\.(failedAttempts|lastFailureTime|retryAt)$/,
      why: 'the ACME retry record: in cert-manager mode kept in memory (RetryRecords), as cert-manager keeps its own',
    },
    { match: /^status\.conditions\[\]\.observedGeneration$/, why: 'never written on a CertificateRequest (its spec never changes)' },
    {
      match: /^spec\.(acme\.solvers\[\]|solver)\.http01\.(ingress\.pathType|waitInsteadOfSelfCheck)$/,
      why: "opkit's additions to a solver, set by users on opkit's CRDs; on cert-manager's they do not exist, and copying a solver into a Challenge copies what is there",
    },
    {
      match: /^spec\.renewal$/,
      why: "opkit's renewal windows and pause for all of an issuer's Certificates, set by users; on cert-manager's CRDs the field does not exist, and each Certificate follows its own spec.renewal",
    },
  ];
  it.each(ours.map((r) => [r.crd.metadata.name, r] as const))(
    "%s: every field opkit may write there exists in cert-manager's CRD, or is never written in cert-manager mode",
    (name, r) => {
      const extra = stricterThan(schemaOf(theirs.get(name)), schemaOf(r.crd as never))
        .filter((d) => d.kind === 'missing')
        .map((d) => d.path);
      console.log(
        `${name}: ${extra.length} fields cert-manager's CRD lacks\n${extra.map((p) => `  ${p}\n    → ${OURS_ONLY.find((o) => o.match.test(p))?.why ?? 'NO REASON'}`).join('\n')}`,
      );
      expect(extra.filter((p) => !OURS_ONLY.some((o) => o.match.test(p)))).toEqual([]);
    },
  );

  it('every reason is still needed (none is left from a difference that is gone)', () => {
    const keys = all.flatMap((a) => a.diff.map(key));
    expect(REASONS.filter((r) => !keys.some((k) => r.match.test(k))).map((r) => r.match.source)).toEqual([]);
  });
});
