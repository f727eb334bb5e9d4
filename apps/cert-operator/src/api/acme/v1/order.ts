import { defineCustomResource, type Cached } from '@opkit/runtime';
import { Type } from '@sinclair/typebox';
import { Duration, IssuerRef, RetryStatus } from '../../v1/shared.js';

export const ACME_GROUP = 'acme.cert.opkit.dev';
export const ORDER_STATES = ['valid', 'ready', 'pending', 'processing', 'invalid', 'expired', 'errored'] as const;
export type OrderState = (typeof ORDER_STATES)[number];
/** States an Order (or Challenge) never leaves. */
export const FAILED_STATES = ['invalid', 'expired', 'errored'];

const State = Type.Union(ORDER_STATES.map((s) => Type.Literal(s)));

export const Order = defineCustomResource({
  group: ACME_GROUP,
  version: 'v1',
  kind: 'Order',
  plural: 'orders',
  categories: ['opkit'],
  scope: 'Namespaced',
  description: 'One ACME order: authorizations for the identifiers of a CertificateRequest, then the certificate.',
  spec: Type.Object(
    {
      request: Type.String({ description: 'The PEM CSR, base64-encoded.' }),
      issuerRef: IssuerRef,
      commonName: Type.Optional(Type.String()),
      dnsNames: Type.Optional(Type.Array(Type.String())),
      ipAddresses: Type.Optional(Type.Array(Type.String())),
      duration: Type.Optional(Duration()),
    },
    { 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'spec is immutable' }] },
  ),
  status: Type.Object({
    url: Type.Optional(Type.String()),
    finalizeURL: Type.Optional(Type.String()),
    authorizations: Type.Optional(
      Type.Array(
        Type.Object({
          url: Type.String(),
          identifier: Type.Optional(Type.String()),
          wildcard: Type.Optional(Type.Boolean()),
          initialState: Type.Optional(State),
          challenges: Type.Optional(Type.Array(Type.Object({ url: Type.String(), token: Type.Optional(Type.String()), type: Type.String() }))),
        }),
      ),
    ),
    certificate: Type.Optional(Type.String({ description: 'The PEM chain, base64-encoded.' })),
    state: Type.Optional(State),
    reason: Type.Optional(Type.String()),
    failureTime: Type.Optional(Type.String({ format: 'date-time' })),
    ...RetryStatus,
  }),
  printerColumns: [
    { name: 'State', type: 'string', jsonPath: '.status.state' },
    { name: 'Issuer', type: 'string', jsonPath: '.spec.issuerRef.name', priority: 1 },
    { name: 'Reason', type: 'string', jsonPath: '.status.reason', priority: 1 },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});

/** As the cache holds it (name and namespace always set); see Cached. */
export type OrderObject = Cached<NonNullable<(typeof Order.kind)['__type']>>;
