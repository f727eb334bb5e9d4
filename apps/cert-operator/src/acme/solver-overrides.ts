import type { Static } from '@sinclair/typebox';
import type { Solver } from '../api/v1/acme-issuer.js';
import { PROFILE_ANNOTATION } from './profiles.js';

type SolverSpec = Static<typeof Solver>;

/** The annotations this operator writes on a Certificate to steer its HTTP-01 solver (the shims set them). */
export const SOLVER_OVERRIDES = {
  ingressName: 'acme.cert.opkit.dev/http01-override-ingress-name',
  ingressClass: 'acme.cert.opkit.dev/http01-override-ingress-class',
  ingressClassName: 'acme.cert.opkit.dev/http01-override-ingress-ingressclassname',
  parentRefKind: 'acme.cert.opkit.dev/http01-override-parentref-kind',
  parentRefName: 'acme.cert.opkit.dev/http01-override-parentref-name',
  /** The parent's namespace, when it is not the Certificate's (Gateway API self-service: the Gateway is the platform team's). */
  parentRefNamespace: 'acme.cert.opkit.dev/http01-override-parentref-namespace',
} as const;

/** Each override read under this operator's name first, then cert-manager's (set by its ingress-shim or by hand). */
const OVERRIDES = {
  ingressName: [SOLVER_OVERRIDES.ingressName, 'acme.cert-manager.io/http01-override-ingress-name'],
  ingressClass: [SOLVER_OVERRIDES.ingressClass, 'acme.cert-manager.io/http01-override-ingress-class'],
  ingressClassName: [SOLVER_OVERRIDES.ingressClassName, 'acme.cert-manager.io/http01-override-ingress-ingressclassname'],
  parentRefKind: [SOLVER_OVERRIDES.parentRefKind, 'acme.cert-manager.io/http01-parentrefkind'],
  parentRefName: [SOLVER_OVERRIDES.parentRefName, 'acme.cert-manager.io/http01-parentrefname'],
  parentRefNamespace: [SOLVER_OVERRIDES.parentRefNamespace],
} as const;

/**
 * Every annotation that steers a Certificate's ACME orders (a solver override, the profile), for
 * copying Certificate → CertificateRequest → Order.
 */
export const SOLVER_OVERRIDE_ANNOTATIONS: readonly string[] = [...Object.values(OVERRIDES).flat(), PROFILE_ANNOTATION];

export const overrideAnnotationsOf = (annotations: Record<string, string> | undefined): Record<string, string> =>
  Object.fromEntries(Object.entries(annotations ?? {}).filter(([k]) => SOLVER_OVERRIDE_ANNOTATIONS.includes(k)));

const read = (a: Record<string, string> | undefined, names: readonly string[]) => names.map((n) => a?.[n]).find((v) => v !== undefined && v !== '');

/**
 * The issuer's solver as a Certificate's annotations adjust it, as cert-manager's Order controller
 * does: an Ingress name (edit in place) replaces the class settings, a class or class name replaces
 * the others; a Gateway parent replaces the HTTPRoute's parents. Only the solver kind the override
 * is for is touched.
 */
export function applySolverOverrides(solver: SolverSpec, annotations: Record<string, string> | undefined): SolverSpec {
  const out: SolverSpec = structuredClone(solver);
  const ingress = out.http01?.ingress;
  if (ingress) {
    const name = read(annotations, OVERRIDES.ingressName);
    const cls = read(annotations, OVERRIDES.ingressClass);
    const clsName = read(annotations, OVERRIDES.ingressClassName);
    const set = (k: 'name' | 'class' | 'ingressClassName', v: string) => {
      delete ingress.name;
      delete ingress.class;
      delete ingress.ingressClassName;
      ingress[k] = v;
    };
    if (name) set('name', name);
    else if (cls) set('class', cls);
    else if (clsName) set('ingressClassName', clsName);
  }
  const route = out.http01?.gatewayHTTPRoute;
  const parentName = read(annotations, OVERRIDES.parentRefName);
  if (route && parentName) {
    const kind = read(annotations, OVERRIDES.parentRefKind) ?? 'Gateway';
    const namespace = read(annotations, OVERRIDES.parentRefNamespace);
    // The group of the parent's kind: ListenerSet's experimental form (XListenerSet) is in Gateway API's x-k8s group.
    const group = kind.startsWith('X') ? 'gateway.networking.x-k8s.io' : 'gateway.networking.k8s.io';
    route.parentRefs = [{ name: parentName, kind, group, ...(namespace ? { namespace } : {}) }];
  }
  return out;
}
