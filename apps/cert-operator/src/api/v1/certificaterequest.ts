import { Conditions, defineCustomResource, type Cached } from '@opkit/runtime';
import { Type } from '@sinclair/typebox';
import { Duration, IssuerRef, Usages } from './shared.js';

export const CertificateRequestSpec = Type.Object(
  {
    // 64 KiB: a CSR with the most names a Certificate may ask for fits several times over.
    request: Type.String({ minLength: 1, maxLength: 65_536, description: 'The PEM CSR, base64-encoded (as cert-manager).' }),
    issuerRef: IssuerRef,
    duration: Type.Optional(Duration({ description: 'Requested lifetime of the certificate; the issuer may not honour it.' })),
    isCA: Type.Optional(Type.Boolean({ description: 'Request a CA certificate (basicConstraints CA:TRUE).' })),
    usages: Type.Optional(Usages),
    username: Type.Optional(
      Type.String({
        description:
          "The user that created the request, as the API server authenticated them: set by the operator's admission webhook, whatever the creator sent.",
      }),
    ),
    uid: Type.Optional(Type.String({ description: 'The uid of that user (set by the webhook, as username).' })),
    groups: Type.Optional(Type.Array(Type.String(), { description: 'The groups of that user (set by the webhook, as username).' })),
    extra: Type.Optional(
      Type.Record(Type.String(), Type.Array(Type.String()), { description: 'Extra attributes of that user (set by the webhook, as username).' }),
    ),
  },
  {
    description: 'What is asked of the issuer; immutable once created.',
    'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'spec is immutable: create a new CertificateRequest instead' }],
  },
);

export const CertificateRequestStatus = Type.Object({
  conditions: Type.Optional(Conditions),
  certificate: Type.Optional(Type.String({ description: 'The issued PEM chain, base64-encoded.' })),
  ca: Type.Optional(Type.String({ description: 'The PEM CA, base64-encoded, when the issuer knows it.' })),
  failureTime: Type.Optional(Type.String({ format: 'date-time', description: 'When the request failed for good; it is not retried.' })),
});

/** The CertificateRequest resource in `group` (the API mode's, see groups.ts). */
export const certificateRequestResource = (group: string) =>
  defineCustomResource({
    group,
    version: 'v1',
    kind: 'CertificateRequest',
    plural: 'certificaterequests',
    shortNames: ['cr', 'crs'],
    categories: ['opkit'],
    scope: 'Namespaced',
    description: 'One request to an issuer to sign one CSR.',
    spec: CertificateRequestSpec,
    status: CertificateRequestStatus,
    printerColumns: [
      { name: 'Approved', type: 'string', jsonPath: '.status.conditions[?(@.type=="Approved")].status' },
      { name: 'Denied', type: 'string', jsonPath: '.status.conditions[?(@.type=="Denied")].status' },
      { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
      { name: 'Issuer', type: 'string', jsonPath: '.spec.issuerRef.name' },
      { name: 'Requester', type: 'string', jsonPath: '.spec.username', priority: 1 },
      { name: 'Status', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].message', priority: 1 },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
  });

/** As the cache holds it (name and namespace always set); see Cached. */
export type CertificateRequestObject = Cached<NonNullable<ReturnType<typeof certificateRequestResource>['kind']['__type']>>;
