import { Type } from '@sinclair/typebox';

/** Opaque Kubernetes structures passed through as given (affinity, tolerations, security contexts). */
const Preserved = Type.Unsafe<Record<string, unknown>>({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
const StringMap = Type.Record(Type.String(), Type.String());
const SecretKeySelector = Type.Object({ name: Type.String({ minLength: 1 }), key: Type.Optional(Type.String()) });

const ObjectMetaTemplate = Type.Object({ labels: Type.Optional(StringMap), annotations: Type.Optional(StringMap) });

/** What cert-manager lets users set on HTTP-01 solver pods; merged into the hardened defaults. */
export const PodTemplate = Type.Object({
  metadata: Type.Optional(ObjectMetaTemplate),
  spec: Type.Optional(
    Type.Object({
      nodeSelector: Type.Optional(StringMap),
      affinity: Type.Optional(Preserved),
      tolerations: Type.Optional(Type.Array(Preserved)),
      priorityClassName: Type.Optional(Type.String()),
      serviceAccountName: Type.Optional(Type.String()),
      imagePullSecrets: Type.Optional(Type.Array(Type.Object({ name: Type.String() }))),
      securityContext: Type.Optional(Preserved),
      resources: Type.Optional(Preserved),
    }),
  ),
});

const ServiceType = Type.Union([Type.Literal('NodePort'), Type.Literal('ClusterIP')]);

export const HTTP01Ingress = Type.Object(
  {
    ingressClassName: Type.Optional(Type.String()),
    class: Type.Optional(Type.String({ description: 'Sets the kubernetes.io/ingress.class annotation (legacy).' })),
    name: Type.Optional(Type.String({ description: 'Edit this existing Ingress in place instead of creating one.' })),
    serviceType: Type.Optional(ServiceType),
    podTemplate: Type.Optional(PodTemplate),
    ingressTemplate: Type.Optional(Type.Object({ metadata: Type.Optional(ObjectMetaTemplate) })),
  },
  { 'x-kubernetes-validations': [{ rule: '[has(self.ingressClassName), has(self.class), has(self.name)].filter(x, x).size() <= 1', message: 'set at most one of ingressClassName, class and name' }] },
);

export const HTTP01GatewayHTTPRoute = Type.Object({
  serviceType: Type.Optional(ServiceType),
  labels: Type.Optional(StringMap),
  parentRefs: Type.Optional(
    Type.Array(
      Type.Object({
        name: Type.String(),
        namespace: Type.Optional(Type.String()),
        kind: Type.Optional(Type.String()),
        group: Type.Optional(Type.String()),
        sectionName: Type.Optional(Type.String()),
        port: Type.Optional(Type.Integer()),
      }),
    ),
  ),
  podTemplate: Type.Optional(PodTemplate),
});

export const Solver = Type.Object({
  selector: Type.Optional(
    Type.Object({
      matchLabels: Type.Optional(StringMap),
      dnsNames: Type.Optional(Type.Array(Type.String())),
      dnsZones: Type.Optional(Type.Array(Type.String())),
    }),
  ),
  http01: Type.Optional(
    Type.Object(
      { ingress: Type.Optional(HTTP01Ingress), gatewayHTTPRoute: Type.Optional(HTTP01GatewayHTTPRoute) },
      { 'x-kubernetes-validations': [{ rule: '[has(self.ingress), has(self.gatewayHTTPRoute)].filter(x, x).size() == 1', message: 'set exactly one of ingress and gatewayHTTPRoute' }] },
    ),
  ),
});

export const ACMEIssuer = Type.Object(
  {
    server: Type.String({ pattern: '^https?://', description: 'The ACME directory URL.' }),
    email: Type.Optional(Type.String()),
    privateKeySecretRef: SecretKeySelector,
    skipTLSVerify: Type.Optional(Type.Boolean()),
    caBundle: Type.Optional(Type.String({ description: 'Base64 PEM bundle to trust for the ACME server.' })),
    disableAccountKeyGeneration: Type.Optional(Type.Boolean()),
    externalAccountBinding: Type.Optional(
      Type.Object({
        keyID: Type.String({ minLength: 1 }),
        keySecretRef: SecretKeySelector,
        keyAlgorithm: Type.Optional(Type.Union([Type.Literal('HS256'), Type.Literal('HS384'), Type.Literal('HS512')])),
      }),
    ),
    preferredChain: Type.Optional(Type.String({ maxLength: 64 })),
    solvers: Type.Optional(Type.Array(Solver, { maxItems: 16 })),
  },
  { 'x-kubernetes-validations': [{ rule: '!(has(self.skipTLSVerify) && self.skipTLSVerify && has(self.caBundle))', message: 'skipTLSVerify and caBundle are mutually exclusive' }] },
);

export const ACMEIssuerStatus = Type.Object({
  uri: Type.Optional(Type.String({ description: 'The registered account URL.' })),
  lastRegisteredEmail: Type.Optional(Type.String()),
  lastPrivateKeyHash: Type.Optional(Type.String()),
});
