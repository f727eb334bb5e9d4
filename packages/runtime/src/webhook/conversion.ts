import type { KubeObject } from '../client/types.js';
import type { VersionedResource } from '../crd/versioned-resource.js';
import { deepEqual } from '../helpers/equality.js';

interface ConversionRequest {
  uid: string;
  desiredAPIVersion: string;
  objects: KubeObject[];
}

export interface ConversionResponse {
  uid: string;
  convertedObjects?: KubeObject[];
  result: { status: 'Success' } | { status: 'Failure'; message: string };
}

/**
 * Converts objects between the versions of the registered resources, always through the hub: a
 * spoke goes up with its `toHub`, comes down with the other spoke's `fromHub`. The API server sends
 * one review per list or watch event; one object that cannot be converted fails the review, and
 * the API server answers the client with the message.
 */
export class Converter {
  private readonly byGroupKind = new Map<string, VersionedResource>();

  add(resource: VersionedResource): void {
    const d = resource.hub.definition;
    this.byGroupKind.set(`${d.group}/${d.kind}`, resource);
  }

  get resources(): VersionedResource[] {
    return [...this.byGroupKind.values()];
  }

  convert(obj: KubeObject & { apiVersion?: string; kind?: string }, desiredAPIVersion: string): KubeObject {
    const [group, fromVersion] = (obj.apiVersion ?? '').split('/');
    const r = this.byGroupKind.get(`${group}/${obj.kind}`);
    if (!r) throw new Error(`no conversion is registered for ${obj.kind} in ${group}`);
    const [desiredGroup, toVersion] = desiredAPIVersion.split('/');
    if (desiredGroup !== group) throw new Error(`cannot convert ${obj.apiVersion} to another group (${desiredAPIVersion})`);
    if (fromVersion === toVersion) return obj;
    const hubVersion = r.hub.definition.version;
    const spokeOf = (v: string | undefined) => {
      const s = r.spokes.find((x) => x.resource.definition.version === v);
      if (!s) throw new Error(`${obj.kind} has no version ${v} (served: ${r.versions.map((x) => x.definition.version).join(', ')})`);
      return s;
    };
    const hub = fromVersion === hubVersion ? obj : carry(obj, spokeOf(fromVersion).toHub(obj));
    const out = toVersion === hubVersion ? hub : carry(hub, spokeOf(toVersion).fromHub(hub as never));
    // Identity is the API server's, not the conversion's: whatever the functions did with metadata,
    // name, uid, resourceVersion and the rest go back as they came (the API server rejects changes).
    return { ...out, apiVersion: desiredAPIVersion, kind: obj.kind, metadata: { ...out.metadata, ...pick(obj.metadata) } } as KubeObject;
  }

  review(request: ConversionRequest): ConversionResponse {
    try {
      return { uid: request.uid, convertedObjects: request.objects.map((o) => this.convert(o, request.desiredAPIVersion)), result: { status: 'Success' } };
    } catch (err) {
      return { uid: request.uid, result: { status: 'Failure', message: (err as Error).message } };
    }
  }
}

/**
 * Labels and annotations belong to no version: a spoke function that builds new metadata without
 * them would drop them for every client of that version, and a read-modify-write through it would
 * store the loss. They come from the input unless the function's output says otherwise (returning
 * `annotations` at all, even without one it was given, is saying so: the hub-and-spoke pattern
 * keeps a field the other version lacks in an annotation and takes it out again).
 */
function carry<T extends KubeObject>(input: KubeObject, output: T): T {
  const meta = output.metadata as KubeObject['metadata'];
  return {
    ...output,
    metadata: {
      ...meta,
      ...(!('labels' in meta) && input.metadata.labels ? { labels: input.metadata.labels } : {}),
      ...(!('annotations' in meta) && input.metadata.annotations ? { annotations: input.metadata.annotations } : {}),
    },
  };
}

function pick(m: KubeObject['metadata']) {
  const {
    name,
    namespace,
    uid,
    resourceVersion,
    generation,
    creationTimestamp,
    deletionTimestamp,
    deletionGracePeriodSeconds,
    generateName,
    ownerReferences,
    finalizers,
    managedFields,
  } = m as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries({
      name,
      namespace,
      uid,
      resourceVersion,
      generation,
      creationTimestamp,
      deletionTimestamp,
      deletionGracePeriodSeconds,
      generateName,
      ownerReferences,
      finalizers,
      managedFields,
    }).filter(([, v]) => v !== undefined),
  );
}

export const conversionReview = (response: ConversionResponse) => ({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response });

/** A conversion that does not come back to what it started from. */
export interface LossyRoundTrip {
  /** The object, `namespace/name`. */
  name: string;
  /** Its version, and the version it went through. */
  from: string;
  via: string;
  /** What differs after the round trip: `spec.size: 3 → 2`, `metadata.labels.team: "a" → (missing)`. */
  differences: string[];
}

/**
 * For tests of a versioned API: converts each object to every other served version and back, as
 * the API server does for clients of those versions, and lists the round trips that lose or change
 * anything. A conversion that passes can be served: no client of any version loses a field by
 * reading and writing back. `expect(conversionRoundTrips(MyAPI, samples)).toEqual([])`.
 */
export function conversionRoundTrips(resource: VersionedResource, objects: KubeObject[]): LossyRoundTrip[] {
  const c = new Converter();
  c.add(resource);
  const group = resource.hub.definition.group;
  const out: LossyRoundTrip[] = [];
  for (const obj of objects) {
    const from = (obj.apiVersion ?? '').split('/')[1] ?? '';
    for (const v of resource.versions.map((r) => r.definition.version)) {
      if (v === from) continue;
      const back = c.convert(c.convert(structuredClone(obj), `${group}/${v}`), obj.apiVersion!);
      const differences = diff(withoutEmptyMaps(obj), withoutEmptyMaps(back));
      if (differences.length) out.push({ name: [obj.metadata.namespace, obj.metadata.name].filter(Boolean).join('/'), from, via: v, differences });
    }
  }
  return out;
}

/** Empty labels or annotations are no labels or annotations: the API server stores neither. */
const withoutEmptyMaps = (o: KubeObject): KubeObject => {
  const { labels, annotations } = o.metadata;
  return {
    ...o,
    metadata: {
      ...o.metadata,
      labels: labels && Object.keys(labels).length ? labels : undefined,
      annotations: annotations && Object.keys(annotations).length ? annotations : undefined,
    },
  };
};

const show = (v: unknown) => (v === undefined ? '(missing)' : JSON.stringify(v));

/** Where two JSON values differ, as `path: before → after` lines. */
function diff(a: unknown, b: unknown, path = ''): string[] {
  if (deepEqual(a, b)) return [];
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObj(a) || !isObj(b)) return [`${path || '.'}: ${show(a)} → ${show(b)}`];
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return keys.flatMap((k) => diff(a[k], b[k], path ? `${path}.${k}` : k));
}
