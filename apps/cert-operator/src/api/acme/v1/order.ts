import { defineCustomResource, type Cached } from '@opkit/runtime';
import { Type } from '@sinclair/typebox';
import { Duration, IssuerRef, RetryStatus } from '../../v1/shared.js';

export const ORDER_STATES = ['valid', 'ready', 'pending', 'processing', 'invalid', 'expired', 'errored'] as const;
export type OrderState = (typeof ORDER_STATES)[number];
/** States an Order (or Challenge) never leaves. */
export const FAILED_STATES = ['invalid', 'expired', 'errored'];

const State = (description: string) =>
  Type.Union(
    ORDER_STATES.map((s) => Type.Literal(s)),
    { description },
  );

/** The Order resource in `group` (the API mode's ACME group, see groups.ts). */
export const orderResource = (group: string) =>
  defineCustomResource({
    group,
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
        commonName: Type.Optional(Type.String({ description: 'The Common Name of the CSR (it must also be one of the identifiers).' })),
        dnsNames: Type.Optional(Type.Array(Type.String(), { description: 'The DNS identifiers to authorize.' })),
        ipAddresses: Type.Optional(Type.Array(Type.String(), { description: 'The IP identifiers to authorize (RFC 8738).' })),
        duration: Type.Optional(Duration({ description: "Requested lifetime, sent as the order's notAfter when the issuer sets enableDurationFeature." })),
        profile: Type.Optional(
          Type.String({ description: "The ACME profile the order asks for (the Certificate's annotation, else the issuer's acme.profile)." }),
        ),
        replaces: Type.Optional(
          Type.String({ description: 'The ARI identifier of the certificate this order renews (RFC 9773 §5), sent when the CA offers ARI.' }),
        ),
      },
      {
        description: 'The order, from its CertificateRequest; immutable.',
        'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'spec is immutable' }],
      },
    ),
    status: Type.Object({
      url: Type.Optional(Type.String({ description: 'The order URL at the ACME server.' })),
      finalizeURL: Type.Optional(Type.String({ description: 'Where the CSR is sent once every authorization is valid.' })),
      authorizations: Type.Optional(
        Type.Array(
          Type.Object(
            {
              url: Type.String({ description: 'The authorization URL at the ACME server.' }),
              identifier: Type.Optional(Type.String({ description: 'The name (or IP address) being authorized.' })),
              wildcard: Type.Optional(Type.Boolean({ description: 'Whether it is for *.identifier.' })),
              initialState: Type.Optional(State('Its state when the order was created (valid: authorized before, no challenge needed).')),
              challenges: Type.Optional(
                Type.Array(
                  Type.Object(
                    {
                      url: Type.String({ description: 'The challenge URL.' }),
                      token: Type.Optional(Type.String({ description: 'The challenge token.' })),
                      type: Type.String({ description: 'The challenge type (http-01, dns-01, tls-alpn-01).' }),
                    },
                    { description: 'One way the CA offers to prove control.' },
                  ),
                  {
                    description:
                      'The challenges the CA offered that carry a token (those it can be proven with here: HTTP-01, DNS-01); one without a token, such as dns-persist-01, is not listed.',
                  },
                ),
              ),
            },
            { description: 'One identifier to prove control of.' },
          ),
          { description: "The order's authorizations, one per identifier." },
        ),
      ),
      certificate: Type.Optional(Type.String({ description: 'The PEM chain, base64-encoded.' })),
      state: Type.Optional(State("The order's state at the ACME server (RFC 8555 §7.1.6), or errored when it failed here.")),
      reason: Type.Optional(Type.String({ description: 'Why the order is in its state, for humans.' })),
      failureTime: Type.Optional(Type.String({ format: 'date-time', description: 'When the order failed for good.' })),
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
export type OrderObject = Cached<NonNullable<ReturnType<typeof orderResource>['kind']['__type']>>;

/** The Order has ended for its request: failed for good, or valid with the certificate in its status. */
export const orderEnded = (o: OrderObject): boolean =>
  (!!o.status?.state && FAILED_STATES.includes(o.status.state)) || (o.status?.state === 'valid' && !!o.status.certificate);
