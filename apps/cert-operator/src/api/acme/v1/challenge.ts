import { defineCustomResource, type Cached } from '@opkit/runtime';
import { Type } from '@sinclair/typebox';
import { Solver } from '../../v1/acme-issuer.js';
import { IssuerRef, RetryStatus } from '../../v1/shared.js';
import { ACME_GROUP, ORDER_STATES } from './order.js';

export const CHALLENGE_FINALIZER = `${ACME_GROUP}/finalizer`;

export const Challenge = defineCustomResource({
  group: ACME_GROUP,
  version: 'v1',
  kind: 'Challenge',
  plural: 'challenges',
  categories: ['opkit'],
  scope: 'Namespaced',
  description: 'One ACME HTTP-01 challenge: the solver resources that answer it, the self-check, the validation.',
  spec: Type.Object(
    {
      url: Type.String(),
      authorizationURL: Type.String(),
      dnsName: Type.String(),
      wildcard: Type.Optional(Type.Boolean()),
      type: Type.Union([Type.Literal('HTTP-01'), Type.Literal('DNS-01')]),
      token: Type.String(),
      key: Type.String({ description: 'The key authorization (token.thumbprint) the solver serves.' }),
      solver: Solver,
      issuerRef: IssuerRef,
    },
    { 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'spec is immutable' }] },
  ),
  status: Type.Object({
    processing: Type.Optional(Type.Boolean({ description: 'Scheduled: counts against the concurrency cap.' })),
    presented: Type.Optional(Type.Boolean()),
    presentedAt: Type.Optional(Type.String({ format: 'date-time' })),
    reason: Type.Optional(Type.String()),
    state: Type.Optional(Type.Union(ORDER_STATES.map((s) => Type.Literal(s)))),
    ...RetryStatus,
  }),
  printerColumns: [
    { name: 'State', type: 'string', jsonPath: '.status.state' },
    { name: 'Domain', type: 'string', jsonPath: '.spec.dnsName' },
    { name: 'Reason', type: 'string', jsonPath: '.status.reason', priority: 1 },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});

/** As the cache holds it (name and namespace always set); see Cached. */
export type ChallengeObject = Cached<NonNullable<(typeof Challenge.kind)['__type']>>;
