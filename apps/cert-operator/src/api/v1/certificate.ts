import { Conditions, defineCustomResource, type Cached } from '@opkit/runtime';
import { Type } from '@sinclair/typebox';
import { Duration, IssuerRef, Renewal, Usages } from './shared.js';

export const DEFAULT_DURATION = '2160h'; // 90 days, as cert-manager

const StringList = (description: string, maxItems: number) => Type.Array(Type.String(), { description, maxItems });
/**
 * The most names of one kind a certificate may carry (public CAs take 100). Every name costs the
 * operator ASN.1 work on its one event loop, shared by every namespace: 4,000 names stalled it for
 * half a second per issuance (the hostile-tenant test), 256 cost about 35 ms.
 */
export const MAX_SANS = 256;

/** cert-manager's signature algorithms (spec.signatureAlgorithm). */
export const SIGNATURE_ALGORITHMS = [
  'SHA256WithRSA',
  'SHA384WithRSA',
  'SHA512WithRSA',
  'ECDSAWithSHA256',
  'ECDSAWithSHA384',
  'ECDSAWithSHA512',
  'PureEd25519',
] as const;
const SubjectField = (what: string) => Type.Optional(StringList(`${what} of the subject.`, 64));

const PasswordSource = {
  passwordSecretRef: Type.Optional(
    Type.Object(
      {
        name: Type.String({ minLength: 1, description: "Name of a Secret in the Certificate's namespace." }),
        key: Type.String({ minLength: 1, description: 'Key in the Secret holding the password.' }),
      },
      { description: 'The Secret key holding the keystore password.' },
    ),
  ),
  password: Type.Optional(
    Type.String({ minLength: 1, description: 'The keystore password, literally (visible to anyone who can read the Certificate: prefer passwordSecretRef).' }),
  ),
};
const passwordRules = [
  { rule: '!self.create || has(self.passwordSecretRef) != has(self.password)', message: 'set exactly one of passwordSecretRef and password' },
];

/** cert-manager's keystores: files for Java and Windows applications, written into the Secret beside tls.crt. */
export const Keystores = Type.Object(
  {
    jks: Type.Optional(
      Type.Object(
        {
          create: Type.Boolean({ description: 'Write keystore.jks (the key and chain) and, when the CA is known, truststore.jks (the CA).' }),
          ...PasswordSource,
          alias: Type.Optional(Type.String({ minLength: 1, description: 'Alias of the key entry (default "certificate").' })),
        },
        { description: 'Java KeyStore files.', 'x-kubernetes-validations': passwordRules },
      ),
    ),
    pkcs12: Type.Optional(
      Type.Object(
        {
          create: Type.Boolean({ description: 'Write keystore.p12 (the key and chain) and, when the CA is known, truststore.p12 (the CA).' }),
          ...PasswordSource,
          profile: Type.Optional(
            Type.Union([Type.Literal('LegacyRC2'), Type.Literal('LegacyDES'), Type.Literal('Modern2023'), Type.Literal('Modern2026')], {
              description:
                "The algorithms: LegacyDES (default here: 3DES, SHA-1 MAC; every reader opens it) or Modern2023 (AES-256, PBKDF2, SHA-256 MAC). Not supported, said on the Certificate: LegacyRC2 (cert-manager's default; OpenSSL 3 refuses RC2 without its legacy provider) and Modern2026 (PBMAC1, which only OpenSSL 3.4 and Java 26 read).",
            }),
          ),
        },
        { description: 'PKCS#12 files.', 'x-kubernetes-validations': passwordRules },
      ),
    ),
  },
  { description: 'Keystores written into the Secret; rewritten with each issuance.' },
);

const NameSubtrees = (description: string) =>
  Type.Object(
    {
      dnsDomains: Type.Optional(Type.Array(Type.String(), { description: 'DNS domains (a domain covers its subdomains).' })),
      ipRanges: Type.Optional(Type.Array(Type.String(), { description: 'IP ranges in CIDR notation (10.0.0.0/8, 2001:db8::/32).' })),
      emailAddresses: Type.Optional(Type.Array(Type.String(), { description: 'Email addresses or domains.' })),
      uriDomains: Type.Optional(Type.Array(Type.String(), { description: 'URI domains.' })),
    },
    { description },
  );

export const CertificateSpec = Type.Object(
  {
    secretName: Type.String({ minLength: 1, maxLength: 253, description: 'The Secret (kubernetes.io/tls) the certificate and key are written to.' }),
    secretTemplate: Type.Optional(
      Type.Object(
        {
          annotations: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'Annotations copied onto the Secret.' })),
          labels: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'Labels copied onto the Secret.' })),
        },
        { description: 'Labels and annotations the Secret carries (kept in step; others on the Secret are left alone).' },
      ),
    ),
    commonName: Type.Optional(
      Type.String({
        maxLength: 64,
        description: 'The subject Common Name. Deprecated by the CA/Browser Forum for TLS: prefer dnsNames (ACME issuers require it to be one of them).',
      }),
    ),
    dnsNames: Type.Optional(StringList('DNS Subject Alternative Names.', MAX_SANS)),
    ipAddresses: Type.Optional(StringList('IP address Subject Alternative Names (IPv4 or IPv6, any notation).', MAX_SANS)),
    uris: Type.Optional(StringList('URI Subject Alternative Names (e.g. SPIFFE IDs).', MAX_SANS)),
    emailAddresses: Type.Optional(StringList('Email Subject Alternative Names.', MAX_SANS)),
    subject: Type.Optional(
      Type.Object(
        {
          organizations: SubjectField('Organizations (O)'),
          countries: SubjectField('Countries (C)'),
          organizationalUnits: SubjectField('Organizational units (OU)'),
          localities: SubjectField('Localities (L)'),
          provinces: SubjectField('Provinces or states (ST)'),
          streetAddresses: SubjectField('Street addresses'),
          postalCodes: SubjectField('Postal codes'),
          serialNumber: Type.Optional(Type.String({ description: 'The subject serialNumber attribute (not the certificate serial number).' })),
        },
        { description: 'Subject fields besides the Common Name; a change re-issues the certificate.' },
      ),
    ),
    duration: Type.Optional(
      Duration({ default: DEFAULT_DURATION, description: 'Requested lifetime (default 2160h = 90 days). The issuer may not honour it.' }),
    ),
    renewBefore: Type.Optional(Duration({ description: 'Renew this long before expiry (default: a third of the issued lifetime).' })),
    renewBeforePercentage: Type.Optional(Type.Integer({ minimum: 1, maximum: 99, description: 'Renew when this share of the issued lifetime remains.' })),
    issuerRef: IssuerRef,
    isCA: Type.Optional(Type.Boolean({ description: 'Issue a CA certificate (basicConstraints CA:TRUE; cert sign is added to the usages).' })),
    usages: Type.Optional(Usages),
    privateKey: Type.Optional(
      Type.Object(
        {
          algorithm: Type.Optional(
            Type.Union([Type.Literal('RSA'), Type.Literal('ECDSA'), Type.Literal('Ed25519')], { description: 'RSA (default), ECDSA or Ed25519.' }),
          ),
          size: Type.Optional(
            Type.Integer({ description: 'RSA: bits, 2048 (default) to 8192. ECDSA: the curve, 256 (default), 384 or 521. Ignored for Ed25519.' }),
          ),
          encoding: Type.Optional(
            Type.Union([Type.Literal('PKCS1'), Type.Literal('PKCS8')], { description: 'PEM encoding of tls.key: PKCS1 (default; SEC 1 for ECDSA) or PKCS8.' }),
          ),
          rotationPolicy: Type.Optional(
            Type.Union([Type.Literal('Always'), Type.Literal('Never')], {
              description: 'Always (default): a new key for every issuance. Never: keep the key in the Secret while it still fits the spec.',
            }),
          ),
        },
        {
          description: 'The private key.',
          // As cert-manager's webhook: refused when applied, not found out by the operator later.
          'x-kubernetes-validations': [
            {
              rule: "!has(self.size) || (has(self.algorithm) && self.algorithm != 'RSA') || (self.size >= 2048 && self.size <= 8192)",
              message: 'RSA key size must be from 2048 to 8192',
            },
            {
              rule: "!has(self.size) || !has(self.algorithm) || self.algorithm != 'ECDSA' || self.size in [256, 384, 521]",
              message: 'ECDSA key size must be 256, 384 or 521',
            },
          ],
        },
      ),
    ),
    revisionHistoryLimit: Type.Optional(Type.Integer({ minimum: 1, description: 'CertificateRequests kept per Certificate (default 1).' })),
    keystores: Type.Optional(Keystores),
    literalSubject: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'The whole subject as an RFC 4514 string ("CN=app,OU=web,O=Example,C=DE"), for applications that need a subject exactly so; replaces commonName and subject.',
      }),
    ),
    otherNames: Type.Optional(
      Type.Array(
        Type.Object(
          {
            oid: Type.String({ pattern: '^[0-2](\\.[0-9]+)+$', description: 'The otherName type, an OID (e.g. 1.3.6.1.4.1.311.20.2.3, the Microsoft UPN).' }),
            utf8Value: Type.String({ minLength: 1, description: 'Its value, written as a UTF8String.' }),
          },
          { description: 'One otherName Subject Alternative Name.' },
        ),
        { maxItems: 16, description: 'otherName Subject Alternative Names with UTF8String values.' },
      ),
    ),
    nameConstraints: Type.Optional(
      Type.Object(
        {
          critical: Type.Optional(Type.Boolean({ description: 'Mark the extension critical (verifiers that do not understand it then reject the CA).' })),
          permitted: Type.Optional(NameSubtrees('Names the CA may sign for; anything else is refused by verifiers.')),
          excluded: Type.Optional(NameSubtrees('Names the CA may not sign for.')),
        },
        { description: 'Name constraints for a CA certificate (isCA): which names the certificates it signs may carry.' },
      ),
    ),
    encodeUsagesInRequest: Type.Optional(
      Type.Boolean({
        description:
          'Write the key usages into the CSR (default true). Some CAs refuse CSRs that carry them: set false and the usages go in the CertificateRequest only.',
      }),
    ),
    signatureAlgorithm: Type.Optional(
      Type.Union(
        SIGNATURE_ALGORITHMS.map((a) => Type.Literal(a)),
        {
          description:
            "cert-manager's signature algorithm. Only the one this operator signs with for the key is supported (SHA256WithRSA; ECDSAWithSHA256, -384, -512 for P-256, P-384, P-521; PureEd25519): any other is said on the Certificate.",
        },
      ),
    ),
    renewal: Type.Optional(Renewal("this certificate (cert-manager v1.21); it replaces its issuer's renewal windows, and a pause by either holds")),
    additionalOutputFormats: Type.Optional(
      Type.Array(
        Type.Object(
          {
            type: Type.Union([Type.Literal('DER'), Type.Literal('CombinedPEM')], {
              description: 'DER: key.der, the private key in binary DER. CombinedPEM: tls-combined.pem, the private key then the certificate chain.',
            }),
          },
          { description: 'One more format of the key and certificate in the Secret.' },
        ),
        { maxItems: 2, description: 'More formats written into the Secret, besides tls.crt, tls.key and ca.crt.' },
      ),
    ),
  },
  {
    'x-kubernetes-validations': [
      { rule: '!(has(self.renewBefore) && has(self.renewBeforePercentage))', message: 'renewBefore and renewBeforePercentage are mutually exclusive' },
      {
        rule: 'has(self.commonName) || has(self.literalSubject) || has(self.dnsNames) || has(self.uris) || has(self.ipAddresses) || has(self.emailAddresses) || has(self.otherNames)',
        message: 'at least one of commonName, literalSubject, dnsNames, uris, ipAddresses, emailAddresses or otherNames is required',
      },
      {
        rule: '!has(self.literalSubject) || (!has(self.commonName) && !has(self.subject))',
        message: 'literalSubject replaces commonName and subject: set one or the other',
      },
      { rule: '!has(self.nameConstraints) || (has(self.isCA) && self.isCA)', message: 'nameConstraints are for CA certificates (isCA: true)' },
    ],
  },
);

export const CertificateStatus = Type.Object({
  conditions: Type.Optional(Conditions),
  notBefore: Type.Optional(Type.String({ format: 'date-time', description: "Start of the issued certificate's validity." })),
  notAfter: Type.Optional(Type.String({ format: 'date-time', description: "End of the issued certificate's validity." })),
  renewalTime: Type.Optional(Type.String({ format: 'date-time', description: 'When the certificate will be renewed.' })),
  revision: Type.Optional(
    Type.Integer({ minimum: 1, description: 'How many times a certificate has been issued for this Certificate; CertificateRequests are numbered by it.' }),
  ),
  nextPrivateKeySecretName: Type.Optional(Type.String({ description: 'The Secret holding the private key of the issuance under way (kept across retries).' })),
  lastFailureTime: Type.Optional(
    Type.String({ format: 'date-time', description: 'When the last issuance failed; the next attempt waits 1 h, doubling per failure, at most 32 h.' }),
  ),
  failedIssuanceAttempts: Type.Optional(Type.Integer({ minimum: 0, description: 'Consecutive failed issuances.' })),
  acme: Type.Optional(
    Type.Object(
      {
        ari: Type.Optional(
          Type.Object(
            {
              suggestedWindow: Type.Optional(
                Type.Object(
                  {
                    start: Type.String({ format: 'date-time', description: 'Start of the suggested renewal window.' }),
                    end: Type.String({ format: 'date-time', description: 'End of the suggested renewal window.' }),
                  },
                  { description: "The CA's suggested renewal window for the current certificate; renewal is at a point inside it fixed per Certificate." },
                ),
              ),
              explanationURL: Type.Optional(Type.String({ description: 'A page the CA offers to explain the window.' })),
              lastChecked: Type.Optional(Type.String({ format: 'date-time', description: 'When the CA was last asked.' })),
              nextCheck: Type.Optional(Type.String({ format: 'date-time', description: 'When the CA is asked again (its Retry-After, within 1 h and 24 h).' })),
              lastError: Type.Optional(Type.String({ description: 'Why the last request for renewal info failed, if it did.' })),
            },
            { description: 'ACME Renewal Information (RFC 9773) about the current certificate, as cert-manager v1.21 names it.' },
          ),
        ),
      },
      // Whatever else cert-manager writes here is kept as it wrote it.
      { 'x-kubernetes-preserve-unknown-fields': true, description: 'What the ACME server said about the current certificate.' },
    ),
  ),
});

/** The Certificate resource in `group` (the API mode's, see groups.ts). */
export const certificateResource = (group: string) =>
  defineCustomResource({
    group,
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
export type CertificateObject = Cached<NonNullable<ReturnType<typeof certificateResource>['kind']['__type']>>;
export type CertificateSpecType = CertificateObject['spec'];
