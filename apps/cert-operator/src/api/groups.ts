/**
 * The API groups the cert operator serves, as data. One install serves one API mode:
 *
 * - `opkit`: `cert.opkit.dev` and `acme.cert.opkit.dev`, beside a cert-manager that may still run
 *   (a cert-manager manifest ports by changing `apiVersion`; `cert-manager.io` in an issuerRef is
 *   accepted as an alias of ours);
 * - `cert-manager`: `cert-manager.io` and `acme.cert-manager.io`, in place of cert-manager's
 *   controller, so everything that speaks cert-manager's API (cmctl, external issuers, policies,
 *   manifests) works unchanged.
 *
 * Annotations and labels follow the group: in cert-manager mode they are cert-manager's own
 * (`cert-manager.io/certificate-name`, `controller.cert-manager.io/fao`, …), which is what lets the
 * operator take over cert-manager's Secrets and requests without issuing anything again.
 */
export const API_MODES = ['opkit', 'cert-manager'] as const;
export type ApiMode = (typeof API_MODES)[number];

export const CERT_MANAGER_GROUP = 'cert-manager.io';

export interface ApiGroups {
  readonly mode: ApiMode;
  /** Issuer, ClusterIssuer, Certificate, CertificateRequest; the prefix of annotations and labels. */
  readonly cert: string;
  /** Order and Challenge; the prefix of the solvers' labels. */
  readonly acme: string;
  /** The issuerRef groups this operator's issuers answer to (an empty group is ours too). */
  readonly issuerGroups: readonly string[];
}

export const API_GROUPS: Record<ApiMode, ApiGroups> = {
  opkit: { mode: 'opkit', cert: 'cert.opkit.dev', acme: 'acme.cert.opkit.dev', issuerGroups: ['cert.opkit.dev', CERT_MANAGER_GROUP] },
  'cert-manager': { mode: 'cert-manager', cert: CERT_MANAGER_GROUP, acme: `acme.${CERT_MANAGER_GROUP}`, issuerGroups: [CERT_MANAGER_GROUP] },
};

/** Annotations, as cert-manager's under the mode's group. */
export const annotationsOf = (group: string) =>
  ({
    certificateName: `${group}/certificate-name`,
    issuerName: `${group}/issuer-name`,
    issuerKind: `${group}/issuer-kind`,
    issuerGroup: `${group}/issuer-group`,
    commonName: `${group}/common-name`,
    altNames: `${group}/alt-names`,
    ipSans: `${group}/ip-sans`,
    uriSans: `${group}/uri-sans`,
    emailSans: `${group}/email-sans`,
    subjectOrganizations: `${group}/subject-organizations`,
    revision: `${group}/certificate-revision`,
    privateKeySecretName: `${group}/private-key-secret-name`,
    /** Set to any new value to force a renewal; the operator removes it once the issuance starts. */
    renew: `${group}/renew`,
    /** The keystore settings an issued Secret's keystores were written with (outputs.ts). */
    keystoreSpec: `${group}/keystore-spec`,
  }) as const;

export const labelsOf = (group: string) =>
  ({
    /** "For All Objects": Secrets with this label are cached in full; all others as metadata only. */
    fao: `controller.${group}/fao`,
    nextPrivateKey: `${group}/next-private-key`,
    certificateName: `${group}/certificate-name`,
  }) as const;

/** The HTTP-01 solvers' labels, under the mode's ACME group. */
export const solverLabelsOf = (acmeGroup: string) =>
  ({
    solver: `${acmeGroup}/http01-solver`,
    domain: `${acmeGroup}/http-domain`,
    token: `${acmeGroup}/http-token`,
  }) as const;

/** Is an issuerRef's group one of this operator's (an empty group is)? Others belong to external issuers. */
export const isOurIssuerGroup = (groups: ApiGroups, group: string | undefined) => !group || groups.issuerGroups.includes(group);

/** Do two issuerRef groups name the same issuers: both this operator's, or the same external group? */
export const sameIssuerGroup = (groups: ApiGroups, a: string | undefined, b: string | undefined) =>
  isOurIssuerGroup(groups, a) ? isOurIssuerGroup(groups, b) : a === b;

/**
 * An object's annotation `name` under any group this mode reads: ours, then cert-manager's (a
 * Secret cert-manager wrote describes the same certificate, and porting a cluster must not
 * re-issue everything). In cert-manager mode the two are one.
 */
export function annotationIn(groups: ApiGroups, obj: { metadata: { annotations?: Record<string, string> } } | undefined, name: string): string | undefined {
  const a = obj?.metadata.annotations ?? {};
  return a[`${groups.cert}/${name}`] ?? a[`${CERT_MANAGER_GROUP}/${name}`];
}
