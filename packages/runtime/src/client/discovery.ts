import { systemClock, type Clock } from '../clock/clock.js';
import { isNotFound } from './errors.js';
import { defineKind, type Kind } from './kind.js';
import type { Transport } from './transport.js';
import type { KubeObject } from './types.js';

/**
 * Discovery and a REST mapper (controller-runtime's `apiutil` RESTMapper, kube-rs's `Discovery`):
 * from an apiVersion and kind to where the kind lives (its plural) and whether it is namespaced,
 * asked of the API server instead of given by hand, so generic code (a `--watch-kind` flag, owning
 * whatever kind a user names) can address any kind the cluster serves.
 *
 * Lazily, per group-version (`/api/v1`, `/apis/<group>/<version>`), as controller-runtime's lazy
 * mapper does: a process that maps two kinds asks twice, not for every group of the cluster. An
 * answer is kept for `ttlMs`; a kind not found asks again at once (a CRD installed a moment ago)
 * before saying it is not served. What the API server answers is read as untrusted input (an
 * aggregated API server answers for its own groups): `parseResourceList`.
 */
export class KindNotServedError extends Error {
  override name = 'KindNotServedError';
}

/** One resource of a group-version, as discovery lists it. */
export interface DiscoveredResource {
  name: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
}

const MAX_RESOURCES = 5_000;
const NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
const KIND = /^[A-Za-z][A-Za-z0-9]{0,62}$/;

/**
 * The resources of an APIResourceList, keeping only well-formed entries (plural names, kinds, a
 * boolean scope) and no subresources (`deployments/scale`). Anything else in the answer is ignored.
 */
export function parseResourceList(body: unknown): DiscoveredResource[] {
  const list = (body as { resources?: unknown } | null)?.resources;
  if (!Array.isArray(list)) return [];
  const out: DiscoveredResource[] = [];
  for (const r of list.slice(0, MAX_RESOURCES) as unknown[]) {
    if (!r || typeof r !== 'object') continue;
    const { name, kind, namespaced, verbs } = r as Record<string, unknown>;
    if (typeof name !== 'string' || name.includes('/') || !NAME.test(name)) continue;
    if (typeof kind !== 'string' || !KIND.test(kind) || typeof namespaced !== 'boolean') continue;
    out.push({ name, kind, namespaced, verbs: Array.isArray(verbs) ? verbs.filter((v): v is string => typeof v === 'string').slice(0, 20) : [] });
  }
  return out;
}

export class RESTMapper {
  private readonly known = new Map<string, { at: number; resources: DiscoveredResource[] }>();

  constructor(
    private readonly transport: Transport,
    private readonly options: { ttlMs?: number; clock?: Clock } = {},
  ) {}

  /** The resources a group-version serves (`v1`, `apps/v1`), fresh within the TTL. */
  async resources(apiVersion: string, fresh = false): Promise<DiscoveredResource[]> {
    const clock = this.options.clock ?? systemClock;
    const hit = this.known.get(apiVersion);
    if (!fresh && hit && clock.monotonic() - hit.at < (this.options.ttlMs ?? 600_000)) return hit.resources;
    const path = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    let resources: DiscoveredResource[];
    try {
      resources = parseResourceList(await this.transport.request({ method: 'GET', path }));
    } catch (err) {
      if (!isNotFound(err)) throw err;
      resources = [];
    }
    this.known.set(apiVersion, { at: clock.monotonic(), resources });
    return resources;
  }

  /** Where `kind` of `apiVersion` lives; KindNotServedError when the cluster does not serve it. */
  async kindFor<T extends KubeObject = KubeObject>(apiVersion: string, kind: string): Promise<Kind<T>> {
    const find = (rs: DiscoveredResource[]) => rs.find((r) => r.kind === kind);
    const found = find(await this.resources(apiVersion)) ?? find(await this.resources(apiVersion, true));
    if (!found) throw new KindNotServedError(`the API server does not serve ${kind} in ${apiVersion} (is its CustomResourceDefinition installed?)`);
    const slash = apiVersion.lastIndexOf('/');
    return defineKind<T>({
      group: slash < 0 ? '' : apiVersion.slice(0, slash),
      version: apiVersion.slice(slash + 1),
      kind,
      plural: found.name,
      namespaced: found.namespaced,
    });
  }
}
