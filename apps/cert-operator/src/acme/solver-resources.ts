import { controllerReference, defineKind, Ingress, Pod, Service, type KubeObject, type ObjectOf } from '@opkit/runtime';
import type { ChallengeObject } from '../api/acme/v1/challenge.js';
import type { CertApi } from '../api/index.js';

type PodSpec = NonNullable<ObjectOf<typeof Pod>['spec']>;

export const SOLVER_PORT = 8089;
export const CHALLENGE_PATH = '/.well-known/acme-challenge/';
/** Gateway API's HTTPRoute: only the fields the solver route uses are typed. */
export const HTTPRoute = defineKind<KubeObject & { spec?: Record<string, unknown> }>({
  group: 'gateway.networking.k8s.io',
  version: 'v1',
  kind: 'HTTPRoute',
  plural: 'httproutes',
  namespaced: true,
});
/** Only our solver objects are cached (labelled as the API mode's: CertApi.solverLabels). */
export const solverInformer = ({ solverLabels }: CertApi) => ({ labelSelector: `${solverLabels.solver}=true` });

/** Adler-32, as cert-manager labels solver objects: short, stable, label-safe. */
export function adler32(s: string): string {
  let a = 1;
  let b = 0;
  for (const byte of Buffer.from(s)) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  return String(((b << 16) | a) >>> 0);
}

/** The labels that identify a challenge's solver objects (and select its pod). */
export const identityLabels = ({ solverLabels }: CertApi, ch: ChallengeObject): Record<string, string> => ({
  [solverLabels.domain]: adler32(ch.spec.dnsName),
  [solverLabels.token]: adler32(ch.spec.token),
  [solverLabels.solver]: 'true',
});

type PodObject = ObjectOf<typeof Pod>;
type Template = NonNullable<NonNullable<ChallengeObject['spec']['solver']['http01']>['ingress']>['podTemplate'];

const http01 = (ch: ChallengeObject) => ch.spec.solver.http01 ?? {};
const podTemplateOf = (ch: ChallengeObject): Template => http01(ch).ingress?.podTemplate ?? http01(ch).gatewayHTTPRoute?.podTemplate;
const serviceTypeOf = (ch: ChallengeObject) => http01(ch).ingress?.serviceType ?? http01(ch).gatewayHTTPRoute?.serviceType ?? 'NodePort';

/**
 * The solver pod, shaped as cert-manager's: hardened (non-root, read-only root filesystem, no
 * ServiceAccount token, no privilege escalation, no capabilities), 10m/64Mi requests and
 * 100m/64Mi limits, then the issuer's podTemplate merged in (labels, annotations, nodeSelector and
 * tolerations merged; affinity, priorityClassName, serviceAccountName, securityContext and
 * resources replaced; imagePullSecrets appended).
 */
export function solverPod(api: CertApi, ch: ChallengeObject, image: string): PodObject {
  const t = podTemplateOf(ch);
  const ts = t?.spec ?? {};
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: 'opkit-acme-http-solver-',
      namespace: ch.metadata.namespace,
      labels: { ...t?.metadata?.labels, ...identityLabels(api, ch) },
      annotations: { 'sidecar.istio.io/inject': 'false', 'cluster-autoscaler.kubernetes.io/safe-to-evict': 'true', ...t?.metadata?.annotations },
      ownerReferences: [controllerReference(api.Challenge.kind, ch)],
    },
    spec: {
      restartPolicy: 'OnFailure',
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      nodeSelector: { 'kubernetes.io/os': 'linux', ...ts.nodeSelector },
      ...(ts.tolerations ? { tolerations: ts.tolerations as never } : {}),
      ...(ts.affinity ? { affinity: ts.affinity as never } : {}),
      ...(ts.priorityClassName ? { priorityClassName: ts.priorityClassName } : {}),
      ...(ts.serviceAccountName ? { serviceAccountName: ts.serviceAccountName } : {}),
      ...(ts.imagePullSecrets ? { imagePullSecrets: ts.imagePullSecrets } : {}),
      securityContext: (ts.securityContext as PodSpec['securityContext']) ?? { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: 'acmesolver',
          image,
          imagePullPolicy: 'IfNotPresent',
          args: [`--listen-port=${SOLVER_PORT}`, `--domain=${ch.spec.dnsName}`, `--token=${ch.spec.token}`, `--key=${ch.spec.key}`],
          ports: [{ name: 'http', containerPort: SOLVER_PORT, protocol: 'TCP' }],
          resources: (ts.resources as NonNullable<PodSpec['containers'][number]>['resources']) ?? {
            requests: { cpu: '10m', memory: '64Mi' },
            limits: { cpu: '100m', memory: '64Mi' },
          },
          securityContext: { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, runAsNonRoot: true, capabilities: { drop: ['ALL'] } },
        },
      ],
    },
  };
}

export function solverService(api: CertApi, ch: ChallengeObject): ObjectOf<typeof Service> {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      generateName: 'opkit-acme-http-solver-',
      namespace: ch.metadata.namespace,
      labels: identityLabels(api, ch),
      annotations: { 'auth.istio.io/8089': 'NONE' },
      ownerReferences: [controllerReference(api.Challenge.kind, ch)],
    },
    spec: {
      type: serviceTypeOf(ch),
      selector: identityLabels(api, ch),
      ports: [{ name: 'http', port: SOLVER_PORT, targetPort: SOLVER_PORT, protocol: 'TCP' }],
    },
  };
}

const challengePath = (ch: ChallengeObject) => `${CHALLENGE_PATH}${ch.spec.token}`;
const isIP = (s: string) => /^[\d.]+$|:/.test(s);

/**
 * The solver path's pathType when the solver does not ask for one. Not Exact, cert-manager's
 * default: ingress-nginx's strict path-type validation (on by default since controller 1.12)
 * refuses an Exact or Prefix path holding anything but letters, digits, '/', '_' and '-', and the
 * challenge path holds a dot. ImplementationSpecific is what every controller accepts; for a path
 * this long and random, a prefix match (ingress-nginx's reading of it) routes nothing else.
 */
export const DEFAULT_SOLVER_PATH_TYPE = 'ImplementationSpecific';

/** The HTTP rule that routes the challenge path to the solver Service. */
export function challengeRule(ch: ChallengeObject, serviceName: string) {
  const pathType = http01(ch).ingress?.pathType ?? DEFAULT_SOLVER_PATH_TYPE;
  return {
    ...(isIP(ch.spec.dnsName) ? {} : { host: ch.spec.dnsName }),
    http: { paths: [{ path: challengePath(ch), pathType, backend: { service: { name: serviceName, port: { number: SOLVER_PORT } } } }] },
  };
}

export function solverIngress(api: CertApi, ch: ChallengeObject, serviceName: string): ObjectOf<typeof Ingress> {
  const ing = http01(ch).ingress ?? {};
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: {
      generateName: 'opkit-acme-http-solver-',
      namespace: ch.metadata.namespace,
      labels: { ...ing.ingressTemplate?.metadata?.labels, ...identityLabels(api, ch) },
      annotations: {
        'nginx.ingress.kubernetes.io/whitelist-source-range': '0.0.0.0/0,::/0',
        ...(ing.class ? { 'kubernetes.io/ingress.class': ing.class } : {}),
        ...ing.ingressTemplate?.metadata?.annotations,
      },
      ownerReferences: [controllerReference(api.Challenge.kind, ch)],
    },
    spec: { ...(ing.ingressClassName ? { ingressClassName: ing.ingressClassName } : {}), rules: [challengeRule(ch, serviceName) as never] },
  };
}

export function solverHTTPRoute(api: CertApi, ch: ChallengeObject, serviceName: string) {
  const gw = http01(ch).gatewayHTTPRoute ?? {};
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: {
      generateName: 'opkit-acme-http-solver-',
      namespace: ch.metadata.namespace,
      labels: { ...gw.labels, ...identityLabels(api, ch) },
      ownerReferences: [controllerReference(api.Challenge.kind, ch)],
    },
    spec: {
      parentRefs: gw.parentRefs ?? [],
      ...(isIP(ch.spec.dnsName) ? {} : { hostnames: [ch.spec.dnsName] }),
      rules: [{ matches: [{ path: { type: 'Exact', value: challengePath(ch) } }], backendRefs: [{ name: serviceName, port: SOLVER_PORT }] }],
    },
  };
}
