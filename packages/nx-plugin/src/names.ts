// The names one operator or kind goes by, derived once so every file agrees on them.

/** An operator's names: `webapp` → apps/webapp-operator, @<scope>/webapp-operator, charts/webapp-operator. */
export interface OperatorNames {
  /** As given, without a trailing `-operator`: `webapp`. */
  name: string;
  /** The app, its chart, image and Lease prefix: `webapp-operator`. */
  app: string;
  project: string;
  e2eProject: string;
  /** For people: `Webapp`, `Web app` for `web-app`. */
  title: string;
  /** For code: `Webapp`, `WebApp` for `web-app` (addWebappOperator). */
  pascal: string;
}

const DNS_LABEL = /^[a-z]([a-z0-9-]*[a-z0-9])?$/;

/** The three directories an operator lives in. */
export const operatorDirs = (n: Pick<OperatorNames, 'app'>) => ({ app: `apps/${n.app}`, chart: `charts/${n.app}`, e2e: `e2e/${n.app}-e2e` });

/** `scope`: the npm scope the workspace's projects are named in (workspaceScope: `@opkit/webapp-operator` here). */
export function operatorNames(given: string, scope = 'opkit'): OperatorNames {
  const name = given.trim().replace(/-operator$/, '');
  if (!DNS_LABEL.test(name) || name.length > 40) {
    throw new Error(
      `"${given}" is not an operator name: lower-case letters, digits and dashes, starting with a letter (it names the app, its chart, image and Kubernetes objects), at most 40 characters`,
    );
  }
  const words = name.split('-');
  const app = `${name}-operator`;
  return {
    name,
    app,
    project: `@${scope}/${app}`,
    e2eProject: `@${scope}/${app}-e2e`,
    title: words.map((w, i) => (i === 0 ? w.charAt(0).toUpperCase() + w.slice(1) : w)).join(' '),
    pascal: words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join(''),
  };
}

/** A kind's names: `WebApp` → webapps (plural), webapp (folder, singular), webApp (variables). */
export interface KindNames {
  kind: string;
  lower: string;
  plural: string;
  camel: string;
}

export function kindNames(kind: string, plural?: string): KindNames {
  if (!/^[A-Z][A-Za-z0-9]*$/.test(kind)) throw new Error(`"${kind}" is not a kind: UpperCamelCase, letters and digits (WebApp)`);
  const lower = kind.toLowerCase();
  return { kind, lower, plural: plural ?? pluralOf(lower), camel: kind.charAt(0).toLowerCase() + kind.slice(1) };
}

/** English plurals as Kubernetes spells resource names (kubebuilder's rules): policy → policies, ingress → ingresses. */
export function pluralOf(lower: string): string {
  if (/[^aeiou]y$/.test(lower)) return `${lower.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(lower)) return `${lower}es`;
  return `${lower}s`;
}

/** An API group: a DNS subdomain with at least one dot (example.com), as the API server requires of CRDs. */
export function checkGroup(group: string): string {
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/.test(group)) {
    throw new Error(`"${group}" is not an API group: a lower-case DNS name with at least one dot (apps.example.com)`);
  }
  return group;
}

/** A Kubernetes API version: v1, v1alpha1, v2beta3. */
export function checkVersion(version: string): string {
  if (!/^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$/.test(version)) throw new Error(`"${version}" is not an API version: v1, v1beta1, v1alpha1…`);
  return version;
}

/**
 * The order Kubernetes prefers versions in: GA over beta over alpha, then the higher major, then
 * the higher minor (v1 > v1beta2 > v1beta1 > v1alpha1). Sorts ascending: the newest is last.
 */
export function compareVersions(a: string, b: string): number {
  const rank = (v: string): [number, number, number] => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [0, 0, 0];
    return [m[2] === 'alpha' ? 1 : m[2] === 'beta' ? 2 : 3, Number(m[1]), Number(m[3] ?? 0)];
  };
  const [x, y] = [rank(a), rank(b)];
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
}
