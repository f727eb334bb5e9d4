import { Conditions, defineCustomResource, type Cached } from '@opkit/runtime';
import { Type } from '@sinclair/typebox';
import { ACMEIssuer, ACMEIssuerStatus } from './acme-issuer.js';
import { Renewal, RetryStatus } from './shared.js';

const URLs = (description: string) => Type.Optional(Type.Array(Type.String(), { description }));
const CRL = URLs('CRL distribution point URLs written into the certificates this issuer signs.');

const SelfSigned = Type.Object({ crlDistributionPoints: CRL }, { description: 'Each certificate is signed by its own private key.' });
const CA = Type.Object(
  {
    secretName: Type.String({
      minLength: 1,
      description: 'Secret with tls.crt and tls.key of the signing CA (for a ClusterIssuer: in the cluster resource namespace).',
    }),
    crlDistributionPoints: CRL,
    ocspServers: URLs('OCSP responder URLs written into the certificates this issuer signs (Authority Information Access).'),
    issuingCertificateURLs: URLs(
      "URLs of the CA's own certificate, written into the certificates this issuer signs (Authority Information Access, CA Issuers).",
    ),
  },
  { description: 'Sign with a CA key pair held in a Secret.' },
);

/**
 * cert-manager's Vault and Venafi issuers: accepted, so a cert-manager manifest applies as it is
 * (and its fields are kept, not pruned), but not implemented here; such an issuer is not Ready and
 * says so.
 */
export const UNSUPPORTED_ISSUER_TYPES = ['vault', 'venafi'] as const;
const Unsupported = (what: string) =>
  Type.Unsafe<Record<string, unknown>>({
    type: 'object',
    'x-kubernetes-preserve-unknown-fields': true,
    description: `cert-manager's ${what} issuer. Not supported by this operator: an issuer of this type is not Ready, saying so.`,
  });

/** Issuer and ClusterIssuer share one spec: exactly one of the issuer types (as cert-manager's webhook requires). */
export const IssuerSpec = Type.Object(
  {
    selfSigned: Type.Optional(SelfSigned),
    ca: Type.Optional(CA),
    acme: Type.Optional(ACMEIssuer),
    vault: Type.Optional(Unsupported('Vault')),
    venafi: Type.Optional(Unsupported('Venafi (CyberArk)')),
    renewal: Type.Optional(Renewal("every Certificate this issuer issues (this operator's; a Certificate's own windows replace these)")),
  },
  {
    description: 'Exactly one kind of issuer: selfSigned, ca or acme (vault and venafi are accepted, not supported).',
    'x-kubernetes-validations': [
      {
        rule: '[has(self.selfSigned), has(self.ca), has(self.acme), has(self.vault), has(self.venafi)].filter(x, x).size() == 1',
        message: 'exactly one of selfSigned, ca, acme, vault and venafi must be set',
      },
    ],
  },
);

export const IssuerStatus = Type.Object({ conditions: Type.Optional(Conditions), acme: Type.Optional(ACMEIssuerStatus), ...RetryStatus });

const common = {
  version: 'v1',
  spec: IssuerSpec,
  status: IssuerStatus,
  categories: ['opkit'],
  printerColumns: [
    { name: 'Ready', type: 'string' as const, jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'Status', type: 'string' as const, jsonPath: '.status.conditions[?(@.type=="Ready")].message', priority: 1 },
    { name: 'Age', type: 'date' as const, jsonPath: '.metadata.creationTimestamp' },
  ],
};

/** The Issuer resource in `group` (the API mode's, see groups.ts). */
export const issuerResource = (group: string) =>
  defineCustomResource({
    ...common,
    group,
    kind: 'Issuer',
    plural: 'issuers',
    scope: 'Namespaced',
    description: 'Signs CertificateRequests of its namespace.',
  });
/** The ClusterIssuer resource in `group`: an Issuer's spec and status, cluster-scoped. */
export const clusterIssuerResource = (group: string) =>
  defineCustomResource({
    ...common,
    group,
    kind: 'ClusterIssuer',
    plural: 'clusterissuers',
    scope: 'Cluster',
    description: 'Signs CertificateRequests of every namespace.',
  });

/** As the cache holds it (name and namespace always set); see Cached. */
export type IssuerObject = Cached<NonNullable<ReturnType<typeof issuerResource>['kind']['__type']>>;
export type IssuerSpecType = IssuerObject['spec'];
