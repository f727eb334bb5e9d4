import { Conditions, defineCustomResource, type Cached } from '@opkit/runtime';
import { Type } from '@sinclair/typebox';
import { Duration, GROUP, IssuerRef, Usages } from './shared.js';

export const DEFAULT_DURATION = '2160h'; // 90 days, as cert-manager

const StringList = Type.Array(Type.String());

export const CertificateSpec = Type.Object(
  {
    secretName: Type.String({ minLength: 1, maxLength: 253, description: 'The Secret (kubernetes.io/tls) the certificate and key are written to.' }),
    secretTemplate: Type.Optional(Type.Object({ annotations: Type.Optional(Type.Record(Type.String(), Type.String())), labels: Type.Optional(Type.Record(Type.String(), Type.String())) })),
    commonName: Type.Optional(Type.String({ maxLength: 64 })),
    dnsNames: Type.Optional(StringList),
    ipAddresses: Type.Optional(StringList),
    uris: Type.Optional(StringList),
    emailAddresses: Type.Optional(StringList),
    subject: Type.Optional(
      Type.Object({
        organizations: Type.Optional(StringList),
        countries: Type.Optional(StringList),
        organizationalUnits: Type.Optional(StringList),
        localities: Type.Optional(StringList),
        provinces: Type.Optional(StringList),
        streetAddresses: Type.Optional(StringList),
        postalCodes: Type.Optional(StringList),
        serialNumber: Type.Optional(Type.String()),
      }),
    ),
    duration: Type.Optional(Duration({ default: DEFAULT_DURATION, description: 'Requested lifetime (default 2160h = 90 days). The issuer may not honour it.' })),
    renewBefore: Type.Optional(Duration({ description: 'Renew this long before expiry (default: a third of the issued lifetime).' })),
    renewBeforePercentage: Type.Optional(Type.Integer({ minimum: 1, maximum: 99, description: 'Renew when this share of the issued lifetime remains.' })),
    issuerRef: IssuerRef,
    isCA: Type.Optional(Type.Boolean()),
    usages: Type.Optional(Usages),
    privateKey: Type.Optional(
      Type.Object({
        algorithm: Type.Optional(Type.Union([Type.Literal('RSA'), Type.Literal('ECDSA'), Type.Literal('Ed25519')])),
        size: Type.Optional(Type.Integer()),
        encoding: Type.Optional(Type.Union([Type.Literal('PKCS1'), Type.Literal('PKCS8')])),
        rotationPolicy: Type.Optional(Type.Union([Type.Literal('Always'), Type.Literal('Never')])),
      },
      {
        // As cert-manager's webhook: refused when applied, not found out by the operator later.
        'x-kubernetes-validations': [
          { rule: "!has(self.size) || (has(self.algorithm) && self.algorithm != 'RSA') || (self.size >= 2048 && self.size <= 8192)", message: 'RSA key size must be from 2048 to 8192' },
          { rule: "!has(self.size) || !has(self.algorithm) || self.algorithm != 'ECDSA' || self.size in [256, 384, 521]", message: 'ECDSA key size must be 256, 384 or 521' },
        ],
      }),
    ),
    revisionHistoryLimit: Type.Optional(Type.Integer({ minimum: 1, description: 'CertificateRequests kept per Certificate (default 1).' })),
  },
  {
    'x-kubernetes-validations': [
      { rule: '!(has(self.renewBefore) && has(self.renewBeforePercentage))', message: 'renewBefore and renewBeforePercentage are mutually exclusive' },
      { rule: 'has(self.commonName) || has(self.dnsNames) || has(self.uris) || has(self.ipAddresses) || has(self.emailAddresses)', message: 'at least one of commonName, dnsNames, uris, ipAddresses or emailAddresses is required' },
    ],
  },
);

export const CertificateStatus = Type.Object({
  conditions: Type.Optional(Conditions),
  notBefore: Type.Optional(Type.String({ format: 'date-time' })),
  notAfter: Type.Optional(Type.String({ format: 'date-time' })),
  renewalTime: Type.Optional(Type.String({ format: 'date-time' })),
  revision: Type.Optional(Type.Integer({ minimum: 1 })),
  nextPrivateKeySecretName: Type.Optional(Type.String()),
  lastFailureTime: Type.Optional(Type.String({ format: 'date-time' })),
  failedIssuanceAttempts: Type.Optional(Type.Integer({ minimum: 0 })),
});

export const Certificate = defineCustomResource({
  group: GROUP,
  version: 'v1',
  kind: 'Certificate',
  plural: 'certificates',
  shortNames: ['cert', 'certs'],
  categories: ['opkit'],
  scope: 'Namespaced',
  description: 'A desired X.509 certificate, kept issued and renewed in a Secret.',
  spec: CertificateSpec,
  status: CertificateStatus,
  printerColumns: [
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'Secret', type: 'string', jsonPath: '.spec.secretName' },
    { name: 'Issuer', type: 'string', jsonPath: '.spec.issuerRef.name', priority: 1 },
    { name: 'Status', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].message', priority: 1 },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});

/** As the cache holds it (name and namespace always set); see Cached. */
export type CertificateObject = Cached<NonNullable<(typeof Certificate.kind)['__type']>>;
export type CertificateSpecType = CertificateObject['spec'];
