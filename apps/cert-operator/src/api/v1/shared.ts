import { Type } from '@sinclair/typebox';

/** A Go duration (`2160h`, `90m`, `1h30m`), as cert-manager's duration fields are. */
export const Duration = (opts: { default?: string; description?: string } = {}) =>
  Type.String({ pattern: '^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$', maxLength: 64, ...opts });

export const IssuerRef = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 253, description: 'Name of the Issuer (in the same namespace) or ClusterIssuer.' }),
    kind: Type.Optional(Type.String({ description: 'Issuer (default) or ClusterIssuer.' })),
    group: Type.Optional(
      Type.String({ description: "The issuer's API group: this operator's (the default) or an external issuer's, whose own controller signs." }),
    ),
  },
  { description: 'The Issuer or ClusterIssuer that signs.' },
);

export const KEY_USAGES = [
  'signing',
  'digital signature',
  'content commitment',
  'key encipherment',
  'key agreement',
  'data encipherment',
  'cert sign',
  'crl sign',
  'encipher only',
  'decipher only',
  'any',
  'server auth',
  'client auth',
  'code signing',
  'email protection',
  's/mime',
  'ipsec end system',
  'ipsec tunnel',
  'ipsec user',
  'timestamping',
  'ocsp signing',
  'microsoft sgc',
  'netscape sgc',
] as const;
export type KeyUsage = (typeof KEY_USAGES)[number];
export const Usages = Type.Array(
  Type.Union(
    KEY_USAGES.map((u) => Type.Literal(u)),
    { description: 'A key usage or extended key usage.' },
  ),
  {
    maxItems: 24,
    description:
      'Key usages and extended key usages of the certificate (default: digital signature and key encipherment, as cert-manager; cert sign is added for a CA).',
  },
);

/**
 * Transient failures talking to an ACME server, in status so a restart keeps the backoff (opkit's
 * addition: cert-manager keeps this only in memory, and restarts start the count again).
 */
export const RetryStatus = {
  failedAttempts: Type.Optional(Type.Integer({ minimum: 0, description: 'Consecutive transient failures talking to the ACME server.' })),
  lastFailureTime: Type.Optional(
    Type.String({ format: 'date-time', description: 'When the last of them happened; the next attempt waits 30 s doubling per failure, at most 30 min.' }),
  ),
  retryAt: Type.Optional(
    Type.String({ format: 'date-time', description: "A server's Retry-After, when longer than the backoff: no attempt goes to the server before it." }),
  ),
};

/**
 * How certificates are renewed: cert-manager v1.21's `renewal` on a Certificate, and the same on an
 * issuer (this operator's), for every Certificate it issues.
 */
export const Renewal = (whose: string) =>
  Type.Object(
    {
      policy: Type.Optional(
        Type.Union([Type.Literal('RenewBefore'), Type.Literal('Disabled')], {
          description:
            "RenewBefore (the default): renew at the ACME server's renewal window, else renewBefore. Disabled: renewal paused, never ahead of expiry (an expired certificate is issued again; readiness says the pause).",
        }),
      ),
      windows: Type.Optional(
        Type.Array(
          Type.Object({
            cron: Type.String({
              minLength: 1,
              maxLength: 200,
              description:
                'When a window opens: five cron fields (minute hour day-of-month month day-of-week 0-6), or @daily, @weekly, @monthly, @yearly, @hourly.',
            }),
            timezone: Type.Optional(Type.String({ minLength: 1, description: 'IANA time zone of the cron fields (default UTC).' })),
            windowDuration: Type.String({ pattern: '^([0-9]+(\\.[0-9]+)?(s|m|h))+$', description: 'How long a window stays open (at least a minute).' }),
          }),
          {
            maxItems: 16,
            description:
              'When renewals may happen: a renewal due outside them waits for the next window, unless none opens before expiry (then it happens when due, said).',
          },
        ),
      ),
    },
    { description: `How renewals of ${whose} happen.` },
  );
