import type { TObject } from '@sinclair/typebox';
import type { KubeObject } from '../client/types.js';
import type { CustomObject, CustomResource } from './custom-resource.js';

type AnyResource = CustomResource<TObject, TObject>;
type ObjectOfResource<R> = R extends CustomResource<infer S, infer St> ? CustomObject<S, St> : never;

/** How one older (or newer) version converts to and from the hub, the version that is stored. */
export interface Spoke<Hub extends AnyResource = AnyResource> {
  resource: AnyResource;
  toHub(obj: KubeObject): ObjectOfResource<Hub>;
  fromHub(obj: ObjectOfResource<Hub>): KubeObject;
  /** Served with a deprecation warning (kubectl shows it on every request of this version). */
  deprecated?: boolean;
}

/**
 * Declares how a spoke version converts to the hub, with both sides typed by their schemas. The
 * functions get the whole object and return the whole object; metadata is theirs to carry (the
 * webhook keeps name, namespace, uid and resourceVersion whatever they return).
 */
export function spoke<S extends AnyResource, Hub extends AnyResource>(
  resource: S,
  _hub: Hub,
  fns: { toHub(obj: ObjectOfResource<S>): ObjectOfResource<Hub>; fromHub(obj: ObjectOfResource<Hub>): ObjectOfResource<S>; deprecated?: boolean },
): Spoke<Hub> {
  return { resource, toHub: fns.toHub as Spoke<Hub>['toHub'], fromHub: fns.fromHub as Spoke<Hub>['fromHub'], deprecated: fns.deprecated };
}

/** A CRD with several versions: the hub is stored, every version is served, a webhook converts. */
export interface VersionedResource<Hub extends AnyResource = AnyResource> {
  hub: Hub;
  spokes: Spoke<Hub>[];
  /** The CustomResourceDefinition with every version and a Webhook conversion at `conversionPath`. */
  crd: Record<string, unknown> & { metadata: { name: string } };
  /** Every version, in the order the CRD lists them. */
  versions: AnyResource[];
}

/** The path the manager serves conversions on (controller-runtime's). */
export const CONVERSION_PATH = '/convert';

/**
 * One API, several versions (hub and spoke, as controller-runtime's conversion package): each
 * version is a `defineCustomResource` with its own schema, subresources and printer columns, the
 * hub is the storage version, and every other version converts through the hub. The API server
 * stores what it stored before; objects written in an older version are read back in any version
 * through the conversion webhook (`conversionWebhook`), which the manager serves.
 */
export function defineVersionedResource<Hub extends AnyResource>(hub: Hub, spokes: Spoke<Hub>[]): VersionedResource<Hub> {
  const hd = hub.definition;
  for (const s of spokes) {
    const d = s.resource.definition;
    if (d.group !== hd.group || d.kind !== hd.kind || d.plural !== hd.plural || d.scope !== hd.scope) {
      throw new Error(`${d.kind} ${d.version}: every version must share group, kind, plural and scope with the hub ${hd.version}`);
    }
    if (d.version === hd.version) throw new Error(`version ${d.version} is given twice`);
  }
  const versionOf = (r: AnyResource, storage: boolean, deprecated?: boolean) => {
    const v = (r.crd.spec as { versions: Record<string, unknown>[] }).versions[0]!;
    return {
      ...v,
      storage,
      ...(deprecated
        ? { deprecated: true, deprecationWarning: `${hd.group}/${r.definition.version} ${hd.kind} is deprecated; use ${hd.group}/${hd.version}` }
        : {}),
    };
  };
  // Older versions first, as kubectl lists them; the order does not choose the preferred version
  // (the API server's priority rules do: v1 > v1beta1 > v1alpha1).
  const versions = [...spokes.map((s) => s.resource), hub];
  const spec = hub.crd.spec as Record<string, unknown>;
  const crd = {
    ...hub.crd,
    spec: {
      ...spec,
      versions: [...spokes.map((s) => versionOf(s.resource, false, s.deprecated)), versionOf(hub, true)],
      conversion: {
        strategy: 'Webhook',
        webhook: {
          conversionReviewVersions: ['v1'],
          // The chart renders the Service reference; tests and local runs set a URL.
          clientConfig: { service: { name: 'webhook-service', namespace: 'system', path: CONVERSION_PATH, port: 443 } },
        },
      },
    },
  };
  return { hub, spokes, crd, versions };
}
