import { Type } from '@sinclair/typebox';
import { Duration } from './shared.js';

/** Opaque Kubernetes structures passed through as given (affinity, tolerations, security contexts). */
const Preserved = (description: string) => Type.Unsafe<Record<string, unknown>>({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true, description });
const StringMap = (description: string) => Type.Record(Type.String(), Type.String(), { description });
const SecretKeySelector = (description: string, key: string) =>
  Type.Object(
    {
      name: Type.String({ minLength: 1, description: 'Name of the Secret (for a ClusterIssuer: in the cluster resource namespace).' }),
      key: Type.Optional(Type.String({ description: key })),
    },
    { description },
  );

const ObjectMetaTemplate = (what: string) =>
  Type.Object(
    {
      labels: Type.Optional(StringMap(`Labels added to the ${what}.`)),
      annotations: Type.Optional(StringMap(`Annotations added to the ${what}.`)),
    },
    { description: `Labels and annotations for the ${what}.` },
  );

/** What cert-manager lets users set on HTTP-01 solver pods; merged into the hardened defaults. */
export const PodTemplate = Type.Object(
  {
    metadata: Type.Optional(ObjectMetaTemplate('solver pod')),
    spec: Type.Optional(
      Type.Object(
        {
          nodeSelector: Type.Optional(StringMap('Node labels the solver pod must be scheduled on.')),
          affinity: Type.Optional(Preserved("The solver pod's scheduling constraints (a core/v1 Affinity).")),
          tolerations: Type.Optional(Type.Array(Preserved('A core/v1 Toleration.'), { description: 'Taints the solver pod tolerates.' })),
          priorityClassName: Type.Optional(Type.String({ description: "The solver pod's PriorityClass." })),
          serviceAccountName: Type.Optional(Type.String({ description: 'The ServiceAccount the solver pod runs as (its token is never mounted).' })),
          imagePullSecrets: Type.Optional(
            Type.Array(Type.Object({ name: Type.Optional(Type.String({ description: 'Name of a Secret of type kubernetes.io/dockerconfigjson.' })) }), {
              description: 'Secrets for pulling the solver image from a private registry.',
            }),
          ),
          securityContext: Type.Optional(Preserved("The solver pod's security context (a core/v1 PodSecurityContext), merged over the hardened default.")),
          resources: Type.Optional(
            Preserved("The solver container's requests and limits (core/v1 ResourceRequirements); default 10m/64Mi requests, 100m/64Mi limits."),
          ),
        },
        {
          description:
            'Fields of the solver pod spec that may be set; the rest stays hardened (non-root, read-only root filesystem, no capabilities, no token).',
        },
      ),
    ),
  },
  { description: 'Overrides for the solver pods, as cert-manager allows.' },
);

const ServiceType = Type.Union([Type.Literal('NodePort'), Type.Literal('ClusterIP'), Type.Literal('LoadBalancer')], {
  description: 'Type of the Service in front of the solver pod: NodePort (the default, as cert-manager), ClusterIP or LoadBalancer.',
});

export const HTTP01Ingress = Type.Object(
  {
    ingressClassName: Type.Optional(Type.String({ description: 'The IngressClass of the solver Ingress (spec.ingressClassName).' })),
    class: Type.Optional(Type.String({ description: 'Sets the kubernetes.io/ingress.class annotation (legacy).' })),
    name: Type.Optional(Type.String({ description: 'Edit this existing Ingress in place instead of creating one.' })),
    serviceType: Type.Optional(ServiceType),
    pathType: Type.Optional(
      Type.Union([Type.Literal('ImplementationSpecific'), Type.Literal('Exact'), Type.Literal('Prefix')], {
        description:
          "pathType of the solver's path, /.well-known/acme-challenge/<token>. Default ImplementationSpecific: ingress-nginx's strict path-type validation (on by default since controller 1.12) refuses an Exact or Prefix path holding a dot. Exact matches only that path where the ingress controller allows it.",
      }),
    ),
    podTemplate: Type.Optional(PodTemplate),
    ingressTemplate: Type.Optional(
      Type.Object({ metadata: Type.Optional(ObjectMetaTemplate('solver Ingress')) }, { description: 'Overrides for the solver Ingress.' }),
    ),
  },
  {
    description: 'Solve HTTP-01 through an Ingress per challenge.',
    'x-kubernetes-validations': [
      {
        rule: '[has(self.ingressClassName), has(self.class), has(self.name)].filter(x, x).size() <= 1',
        message: 'set at most one of ingressClassName, class and name',
      },
    ],
  },
);

export const HTTP01GatewayHTTPRoute = Type.Object(
  {
    serviceType: Type.Optional(ServiceType),
    labels: Type.Optional(StringMap('Labels added to the solver HTTPRoute.')),
    parentRefs: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: Type.String({ description: 'Name of the parent (a Gateway).' }),
            namespace: Type.Optional(Type.String({ description: "The parent's namespace; the challenge's by default." })),
            kind: Type.Optional(Type.String({ description: 'Kind of the parent (default Gateway).' })),
            group: Type.Optional(Type.String({ description: 'API group of the parent (default gateway.networking.k8s.io).' })),
            sectionName: Type.Optional(Type.String({ description: 'A listener of the Gateway, by name.' })),
            port: Type.Optional(Type.Integer({ description: 'A listener of the Gateway, by port.' })),
          },
          { description: 'A Gateway (or listener) the HTTPRoute attaches to.' },
        ),
        { description: 'The Gateways the solver HTTPRoute attaches to.' },
      ),
    ),
    podTemplate: Type.Optional(PodTemplate),
  },
  { description: 'Solve HTTP-01 through a Gateway API HTTPRoute per challenge.' },
);

export const DNS01 = Type.Object(
  {
    cnameStrategy: Type.Optional(
      Type.Union([Type.Literal('None'), Type.Literal('Follow')], {
        description:
          'Follow: when _acme-challenge.<name> is a CNAME, write the TXT record at the end of its chain (delegating challenges to another zone). None (default): write it at _acme-challenge.<name>.',
      }),
    ),
    rfc2136: Type.Optional(
      Type.Object(
        {
          nameserver: Type.String({
            minLength: 1,
            description: 'The primary server of the zone that takes the updates: host or host:port (port 53 by default).',
          }),
          tsigKeyName: Type.Optional(Type.String({ description: 'Name of the TSIG key the server accepts updates with.' })),
          tsigAlgorithm: Type.Optional(
            Type.String({
              description: "The TSIG key's algorithm: HMACMD5 (the default, as cert-manager), HMACSHA1, HMACSHA256 or HMACSHA512, in any case.",
              'x-kubernetes-validations': [
                {
                  rule: "self.upperAscii() in ['HMACMD5', 'HMACSHA1', 'HMACSHA256', 'HMACSHA512']",
                  message: 'tsigAlgorithm must be HMACMD5, HMACSHA1, HMACSHA256 or HMACSHA512',
                },
              ],
            }),
          ),
          protocol: Type.Optional(
            Type.Union([Type.Literal('TCP'), Type.Literal('UDP')], {
              description:
                "cert-manager's choice of transport. Accepted, but updates always go over TCP here: every RFC 2136 server takes them so, and a signed update may not fit a datagram.",
            }),
          ),
          tsigSecretSecretRef: Type.Optional(SecretKeySelector("The Secret holding the TSIG key's secret (base64, as BIND prints it).", 'Key in the Secret.')),
        },
        { description: 'Update the zone with DNS UPDATE (RFC 2136), signed with TSIG: BIND, Knot, PowerDNS and others.' },
      ),
    ),
    webhook: Type.Optional(
      Type.Object(
        {
          groupName: Type.String({ description: 'The API group the solver serves (its APIService is v1alpha1.<groupName>), as its chart names it.' }),
          solverName: Type.String({ description: "The solver's name in that group, as its documentation gives it." }),
          // Any JSON, as cert-manager's CRD has it (no type): a solver's config need not be an object.
          config: Type.Optional(
            Type.Unsafe<unknown>({
              'x-kubernetes-preserve-unknown-fields': true,
              description: "Passed to the solver as it is; what it means is the solver's (credentials are references to Secrets it reads).",
            }),
          ),
        },
        {
          description:
            "A solver speaking cert-manager's DNS webhook protocol, called through the API server's aggregation layer (POST /apis/<groupName>/v1alpha1/<solverName>), so every cert-manager DNS webhook works. Its chart must let this operator's ServiceAccount create in its group.",
        },
      ),
    ),
  },
  {
    description:
      "Answer DNS-01 challenges with a TXT record in the name's zone; the only way to prove control of a wildcard name. rfc2136 is built in, every other DNS provider is reached through a cert-manager DNS webhook solver (webhook); cert-manager's other built-in providers are reported on the issuer as not supported.",
    // Kept so a cert-manager issuer naming another provider is reported, not silently pruned.
    'x-kubernetes-preserve-unknown-fields': true,
  },
);

export const Solver = Type.Object(
  {
    selector: Type.Optional(
      Type.Object(
        {
          matchLabels: Type.Optional(StringMap('Labels the Certificate must carry.')),
          dnsNames: Type.Optional(Type.Array(Type.String(), { description: 'Names this solver is used for (an exact match beats a zone).' })),
          dnsZones: Type.Optional(
            Type.Array(Type.String(), { description: 'Zones this solver is used for: the name or any name under it; the longest match wins.' }),
          ),
        },
        { description: 'Which names this solver is for; empty means every name. The most specific selector wins, as in cert-manager.' },
      ),
    ),
    http01: Type.Optional(
      Type.Object(
        {
          ingress: Type.Optional(HTTP01Ingress),
          gatewayHTTPRoute: Type.Optional(HTTP01GatewayHTTPRoute),
          waitInsteadOfSelfCheck: Type.Optional(
            Duration({ description: "Deprecated: the solver's waitInsteadOfSelfCheck (where cert-manager has it), which wins when both are set." }),
          ),
        },
        {
          description: 'Answer HTTP-01 challenges from a solver pod reached through an Ingress or an HTTPRoute.',
          'x-kubernetes-validations': [
            { rule: '[has(self.ingress), has(self.gatewayHTTPRoute)].filter(x, x).size() == 1', message: 'set exactly one of ingress and gatewayHTTPRoute' },
          ],
        },
      ),
    ),
    dns01: Type.Optional(DNS01),
    waitInsteadOfSelfCheck: Type.Optional(
      Duration({
        description:
          'Skip the self-check: once the challenge is presented, wait this long (e.g. 30s), then ask the ACME server to validate. For clusters that cannot see themselves as the CA does (hairpin NAT, split-horizon DNS), where the self-check would never pass; a record or route not ready by then costs a failed validation.',
      }),
    ),
  },
  {
    description: 'How challenges for some names are solved.',
    'x-kubernetes-validations': [{ rule: 'has(self.http01) != has(self.dns01)', message: 'set exactly one of http01 and dns01' }],
  },
);

export const ACMEIssuer = Type.Object(
  {
    server: Type.String({ pattern: '^https?://', description: 'The ACME directory URL.' }),
    email: Type.Optional(Type.String({ description: 'Contact address registered with the account (expiry notices).' })),
    privateKeySecretRef: SecretKeySelector(
      'The Secret holding the ACME account key; generated when missing (unless disableAccountKeyGeneration).',
      'Key in the Secret (default tls.key).',
    ),
    skipTLSVerify: Type.Optional(Type.Boolean({ description: "Do not verify the ACME server's certificate (tests only)." })),
    caBundle: Type.Optional(Type.String({ description: 'Base64 PEM bundle to trust for the ACME server.' })),
    disableAccountKeyGeneration: Type.Optional(Type.Boolean({ description: 'Never generate the account key: wait for the Secret to be provided.' })),
    externalAccountBinding: Type.Optional(
      Type.Object(
        {
          keyID: Type.String({ minLength: 1, description: 'The key identifier the CA gave.' }),
          keySecretRef: SecretKeySelector('The Secret holding the base64url HMAC key the CA gave.', 'Key in the Secret.'),
          keyAlgorithm: Type.Optional(
            Type.Union([Type.Literal('HS256'), Type.Literal('HS384'), Type.Literal('HS512')], {
              description: 'Deprecated (as in cert-manager): the MAC algorithm is HS256.',
            }),
          ),
        },
        { description: 'Bind the ACME account to an account at the CA (RFC 8555 §7.3.4; ZeroSSL, Google and others require it).' },
      ),
    ),
    preferredChain: Type.Optional(
      Type.String({
        maxLength: 64,
        description: "Pick the alternate chain whose top certificate has this issuer Common Name; the CA's default chain otherwise.",
      }),
    ),
    enableDurationFeature: Type.Optional(
      Type.Boolean({
        description:
          "Send each Certificate's duration to the CA as the order's notAfter (RFC 8555 §7.4). Off by default, as in cert-manager: Let's Encrypt refuses orders that carry it.",
      }),
    ),
    solvers: Type.Optional(Type.Array(Solver, { maxItems: 16, description: 'How challenges are solved; the most specific solver for a name is used.' })),
    profile: Type.Optional(
      Type.String({
        description:
          "The ACME profile every order asks for (e.g. Let's Encrypt's shortlived, six-day certificates), one the CA's directory offers: an issuer naming another is not Ready (UnknownProfile), saying what the CA offers. Under an Issuer (not a ClusterIssuer), a Certificate's acme.cert.opkit.dev/profile annotation overrides it.",
      }),
    ),
  },
  {
    description: "Issue from an ACME server (Let's Encrypt, ZeroSSL, Pebble…), proving control of names with challenges.",
    'x-kubernetes-validations': [
      { rule: '!(has(self.skipTLSVerify) && self.skipTLSVerify && has(self.caBundle))', message: 'skipTLSVerify and caBundle are mutually exclusive' },
    ],
  },
);

export const ACMEIssuerStatus = Type.Object(
  {
    uri: Type.Optional(Type.String({ description: 'The registered account URL.' })),
    lastRegisteredEmail: Type.Optional(Type.String({ description: 'The email the account was registered (or last updated) with.' })),
    lastPrivateKeyHash: Type.Optional(Type.String({ description: 'Hash of the account key the account was registered with; a changed key registers again.' })),
  },
  { description: 'The ACME account.' },
);
