import { defineCustomResource, type Cached } from '@opkit/runtime';
import { Type } from '@sinclair/typebox';
import { Solver } from '../../v1/acme-issuer.js';
import { IssuerRef, RetryStatus } from '../../v1/shared.js';
import { ORDER_STATES } from './order.js';

/** The Challenge resource in `group` (the API mode's ACME group, see groups.ts). */
export const challengeResource = (group: string) =>
  defineCustomResource({
    group,
    version: 'v1',
    kind: 'Challenge',
    plural: 'challenges',
    categories: ['opkit'],
    scope: 'Namespaced',
    description: 'One ACME HTTP-01 challenge: the solver resources that answer it, the self-check, the validation.',
    spec: Type.Object(
      {
        url: Type.String({ description: 'The challenge URL at the ACME server.' }),
        authorizationURL: Type.String({ description: 'The authorization it belongs to.' }),
        dnsName: Type.String({ description: 'The name whose control is proven.' }),
        wildcard: Type.Optional(Type.Boolean({ description: 'Whether the authorization is for *.dnsName.' })),
        type: Type.Union([Type.Literal('HTTP-01'), Type.Literal('DNS-01')], { description: 'The challenge type; this operator solves HTTP-01.' }),
        token: Type.String({ description: 'The challenge token (the last path segment the CA requests).' }),
        key: Type.String({
          description:
            'HTTP-01: the key authorization (token.thumbprint) the solver serves. DNS-01: the TXT record value, base64url(SHA-256(key authorization)).',
        }),
        solver: Solver,
        issuerRef: IssuerRef,
      },
      { description: 'The challenge, from its Order; immutable.', 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'spec is immutable' }] },
    ),
    status: Type.Object({
      processing: Type.Optional(Type.Boolean({ description: 'Scheduled: counts against the concurrency cap.' })),
      presented: Type.Optional(
        Type.Boolean({
          description:
            'The challenge is presented: its solver resources (HTTP-01) or TXT record (DNS-01) are in place. The self-check may not have passed yet; state processing says the CA was asked to validate.',
        }),
      ),
      presentedAt: Type.Optional(
        Type.String({ format: 'date-time', description: 'When the solver resources were created (the self-check timeout counts from here).' }),
      ),
      reason: Type.Optional(Type.String({ description: 'Why the challenge is in its state, for humans (a failing self-check says what it saw).' })),
      state: Type.Optional(
        Type.Union(
          ORDER_STATES.map((s) => Type.Literal(s)),
          { description: "The challenge's state at the ACME server, or errored when it failed here." },
        ),
      ),
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
export type ChallengeObject = Cached<NonNullable<ReturnType<typeof challengeResource>['kind']['__type']>>;
