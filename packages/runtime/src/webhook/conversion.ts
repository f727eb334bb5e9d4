import type { KubeObject } from '../client/types.js';
import type { VersionedResource } from '../crd/versioned-resource.js';

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
    const hub = fromVersion === hubVersion ? obj : spokeOf(fromVersion).toHub(obj);
    const out = toVersion === hubVersion ? hub : spokeOf(toVersion).fromHub(hub as never);
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

function pick(m: KubeObject['metadata']) {
  const { name, namespace, uid, resourceVersion, generation, creationTimestamp, deletionTimestamp, deletionGracePeriodSeconds, generateName, ownerReferences, finalizers, managedFields } = m as Record<string, unknown>;
  return Object.fromEntries(Object.entries({ name, namespace, uid, resourceVersion, generation, creationTimestamp, deletionTimestamp, deletionGracePeriodSeconds, generateName, ownerReferences, finalizers, managedFields }).filter(([, v]) => v !== undefined));
}

export const conversionReview = (response: ConversionResponse) => ({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response });
