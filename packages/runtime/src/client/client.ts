import { isNotFound } from './errors.js';
import { apiVersionOf, resourcePath, type Kind } from './kind.js';
import type { Transport } from './transport.js';
import type { KubeObject, ObjectKey, ObjectList } from './types.js';

export type PatchType = 'merge' | 'json' | 'strategic';

const PATCH_CONTENT_TYPES: Record<PatchType | 'apply', string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  // Apply configurations are YAML; JSON is YAML, so the body stays JSON.
  apply: 'application/apply-patch+yaml',
};

export interface WriteOptions {
  /** Validate only; nothing is persisted. */
  dryRun?: boolean;
  /** Defaults to the client's field manager (the operator's name). */
  fieldManager?: string;
}

export interface ApplyOptions extends WriteOptions {
  /** Take ownership of fields another manager owns (controllers should, as controller-runtime does). */
  force?: boolean;
}

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
}

export interface DeleteOptions {
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

export interface ClientOptions {
  /** Field manager for every write: the operator's name. */
  fieldManager: string;
  /**
   * How the server treats unknown or duplicate fields in writes. Strict (the default) turns a typo
   * in an operator's object into an error instead of a silently dropped field.
   */
  fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
  /** Every request carries this signal: aborted, requests in flight end and new ones are refused. */
  signal?: AbortSignal;
}

/**
 * Typed reads and writes for built-in and custom kinds. Reads here go to the API server; in a
 * controller, read from the cache instead and use the client for writes.
 */
export class Client {
  private readonly transport: Pick<Transport, 'request'>;

  constructor(
    readonly baseTransport: Transport,
    readonly options: ClientOptions,
  ) {
    const signal = options.signal;
    this.transport = signal ? { request: (spec) => baseTransport.request({ ...spec, signal: spec.signal ?? signal }) } : baseTransport;
  }

  /**
   * The same client, fenced by `signal`: once it aborts (a lost lease, a reconcile past its timeout)
   * nothing more is sent through it, so work that outlived its mandate cannot write.
   */
  withSignal(signal: AbortSignal): Client {
    return new Client(this.baseTransport, { ...this.options, signal });
  }

  private writeQuery(o: WriteOptions = {}) {
    return {
      fieldManager: o.fieldManager ?? this.options.fieldManager,
      fieldValidation: this.options.fieldValidation ?? 'Strict',
      dryRun: o.dryRun ? 'All' : undefined,
    };
  }

  private nsOf<T extends KubeObject>(kind: Kind<T>, namespace?: string): string | undefined {
    if (kind.namespaced && !namespace) throw new Error(`${kind.kind} is namespaced: a namespace is required`);
    return kind.namespaced ? namespace : undefined;
  }

  private withTypeMeta<T extends KubeObject>(kind: Kind<T>, obj: T): T {
    return { ...obj, apiVersion: apiVersionOf(kind), kind: kind.kind };
  }

  get<T extends KubeObject>(kind: Kind<T>, key: ObjectKey): Promise<T> {
    return this.transport.request<T>({ method: 'GET', path: resourcePath(kind, this.nsOf(kind, key.namespace), key.name) });
  }

  /** Like get, but undefined when the object does not exist. */
  async find<T extends KubeObject>(kind: Kind<T>, key: ObjectKey): Promise<T | undefined> {
    try {
      return await this.get(kind, key);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** One page (when `limit` is set) or the whole list. Omit the namespace to list across all. */
  async list<T extends KubeObject>(kind: Kind<T>, opts: ListOptions = {}): Promise<ObjectList<T>> {
    // An empty list may come back as `items: null` (PartialObjectMetadataList does).
    const list = await this.transport.request<Omit<ObjectList<T>, 'items'> & { items: T[] | null }>({
      method: 'GET',
      path: resourcePath(kind, opts.namespace),
      query: {
        labelSelector: opts.labelSelector,
        fieldSelector: opts.fieldSelector,
        limit: opts.limit,
        continue: opts.continue,
        resourceVersion: opts.resourceVersion,
      },
    });
    return { ...list, items: list.items ?? [] };
  }

  /** Every item, fetched in pages of `pageSize`. */
  async listAll<T extends KubeObject>(kind: Kind<T>, opts: Omit<ListOptions, 'limit' | 'continue'> = {}, pageSize = 500): Promise<T[]> {
    const items: T[] = [];
    let cont: string | undefined;
    do {
      const page = await this.list(kind, { ...opts, limit: pageSize, continue: cont });
      items.push(...page.items);
      cont = page.metadata.continue || undefined;
    } while (cont);
    return items;
  }

  create<T extends KubeObject>(kind: Kind<T>, obj: T, opts?: WriteOptions): Promise<T> {
    return this.transport.request<T>({
      method: 'POST',
      path: resourcePath(kind, this.nsOf(kind, obj.metadata.namespace)),
      query: this.writeQuery(opts),
      body: this.withTypeMeta(kind, obj),
    });
  }

  /**
   * POST to a resource that answers instead of storing: a call through the API server (an
   * aggregated API server's virtual resource, such as a cert-manager DNS webhook solver's
   * ChallengePayload, which carries no metadata). Unlike create, no field manager and no strict
   * field validation are asked for (there is no object to manage), and the answer is the
   * server's. The body is sent as given, its apiVersion and kind included: a virtual resource's
   * payload may be typed in another group than its path's (a ChallengePayload is
   * webhook.acme.cert-manager.io/v1alpha1 whatever group its solver serves). Fenced by the
   * client's signal like every write.
   */
  call<Req extends object, Res>(kind: Kind, body: Req): Promise<Res> {
    return this.transport.request<Res>({ method: 'POST', path: resourcePath(kind), body });
  }

  /** PUT: fails with a Conflict when `metadata.resourceVersion` is stale. */
  update<T extends KubeObject>(kind: Kind<T>, obj: T, opts?: WriteOptions): Promise<T> {
    return this.transport.request<T>({
      method: 'PUT',
      path: resourcePath(kind, this.nsOf(kind, obj.metadata.namespace), obj.metadata.name),
      query: this.writeQuery(opts),
      body: this.withTypeMeta(kind, obj),
    });
  }

  /** PUT of the status subresource; spec changes in `obj` are ignored by the server. */
  updateStatus<T extends KubeObject>(kind: Kind<T>, obj: T, opts?: WriteOptions): Promise<T> {
    return this.transport.request<T>({
      method: 'PUT',
      path: resourcePath(kind, this.nsOf(kind, obj.metadata.namespace), obj.metadata.name, 'status'),
      query: this.writeQuery(opts),
      body: this.withTypeMeta(kind, obj),
    });
  }

  /** Merge patch (RFC 7386), JSON patch (RFC 6902) or strategic merge patch (built-in kinds only). */
  patch<T extends KubeObject>(
    kind: Kind<T>,
    key: ObjectKey,
    patch: unknown,
    type: PatchType = 'merge',
    opts?: WriteOptions & { subresource?: string },
  ): Promise<T> {
    return this.transport.request<T>({
      method: 'PATCH',
      path: resourcePath(kind, this.nsOf(kind, key.namespace), key.name, opts?.subresource),
      query: this.writeQuery(opts),
      body: patch,
      contentType: PATCH_CONTENT_TYPES[type],
    });
  }

  patchStatus<T extends KubeObject>(kind: Kind<T>, key: ObjectKey, patch: unknown, type: PatchType = 'merge', opts?: WriteOptions): Promise<T> {
    return this.patch(kind, key, patch, type, { ...opts, subresource: 'status' });
  }

  /**
   * Server-side apply: `obj` states the fields this manager owns; the server merges, creates the
   * object if needed, and removes fields this manager stopped stating.
   */
  apply<T extends KubeObject>(kind: Kind<T>, obj: Partial<T> & { metadata: T['metadata'] }, opts: ApplyOptions & { subresource?: string } = {}): Promise<T> {
    return this.transport.request<T>({
      method: 'PATCH',
      path: resourcePath(kind, this.nsOf(kind, obj.metadata.namespace), obj.metadata.name, opts.subresource),
      query: { ...this.writeQuery(opts), force: opts.force ? 'true' : undefined },
      body: this.withTypeMeta(kind, obj as T),
      contentType: PATCH_CONTENT_TYPES.apply,
    });
  }

  applyStatus<T extends KubeObject>(kind: Kind<T>, obj: Partial<T> & { metadata: T['metadata'] }, opts: ApplyOptions = {}): Promise<T> {
    return this.apply(kind, obj, { ...opts, subresource: 'status' });
  }

  async delete<T extends KubeObject>(kind: Kind<T>, key: ObjectKey, opts: DeleteOptions = {}): Promise<void> {
    await this.transport.request({
      method: 'DELETE',
      path: resourcePath(kind, this.nsOf(kind, key.namespace), key.name),
      query: { dryRun: opts.dryRun ? 'All' : undefined },
      body: {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        propagationPolicy: opts.propagationPolicy,
        gracePeriodSeconds: opts.gracePeriodSeconds,
        preconditions: opts.preconditions,
      },
    });
  }

  /** Delete, treating "already gone" as success. Returns whether this call deleted it. */
  async deleteIfExists<T extends KubeObject>(kind: Kind<T>, key: ObjectKey, opts?: DeleteOptions): Promise<boolean> {
    try {
      await this.delete(kind, key, opts);
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }
}
