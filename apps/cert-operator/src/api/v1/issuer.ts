import { Conditions, defineCustomResource, type Cached } from '@opkit/runtime';
import { Type } from '@sinclair/typebox';
import { ACMEIssuer, ACMEIssuerStatus } from './acme-issuer.js';
import { GROUP, RetryStatus } from './shared.js';

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

/** Issuer and ClusterIssuer share one spec: exactly one of the issuer types. */
export const IssuerSpec = Type.Object(
  { selfSigned: Type.Optional(SelfSigned), ca: Type.Optional(CA), acme: Type.Optional(ACMEIssuer) },
  {
    description: 'Exactly one kind of issuer: selfSigned, ca or acme.',
    'x-kubernetes-validations': [
      { rule: '[has(self.selfSigned), has(self.ca), has(self.acme)].filter(x, x).size() == 1', message: 'exactly one of selfSigned, ca and acme must be set' },
    ],
  },
);

export const IssuerStatus = Type.Object({ conditions: Type.Optional(Conditions), acme: Type.Optional(ACMEIssuerStatus), ...RetryStatus });

const common = {
  group: GROUP,
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

export const Issuer = defineCustomResource({
  ...common,
  kind: 'Issuer',
  plural: 'issuers',
  scope: 'Namespaced',
  description: 'Signs CertificateRequests of its namespace.',
});
export const ClusterIssuer = defineCustomResource({
  ...common,
  kind: 'ClusterIssuer',
  plural: 'clusterissuers',
  scope: 'Cluster',
  description: 'Signs CertificateRequests of every namespace.',
});

/** As the cache holds it (name and namespace always set); see Cached. */
export type IssuerObject = Cached<NonNullable<(typeof Issuer.kind)['__type']>>;
export type IssuerSpecType = IssuerObject['spec'];
