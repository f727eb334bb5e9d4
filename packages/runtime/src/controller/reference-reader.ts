import type { Cache } from '../cache/cache.js';
import type { Client } from '../client/client.js';
import type { Kind } from '../client/kind.js';
import { kindKey } from '../client/kind.js';
import type { KubeObject, ObjectKey } from '../client/types.js';

/**
 * Reads objects a controller references (`.references(kind, …)`) without caching every object of
 * their kind: the metadata cache says whether the object exists and which resourceVersion is
 * current; the kind's full cache answers when it holds that version; otherwise one GET, remembered
 * until the resourceVersion changes. A CA Secret that signs a thousand certificates is fetched
 * once, and a Secret nobody references is never held in full.
 */
export class ReferenceReader {
  private readonly fetched = new Map<string, KubeObject>();

  constructor(private readonly cache: Cache) {}

  async read<T extends KubeObject>(client: Pick<Client, 'find'>, kind: Kind<T>, key: ObjectKey): Promise<T | undefined> {
    const meta = await this.cache.get(kind, key, { metadataOnly: true });
    if (!meta) {
      this.fetched.delete(this.id(kind, key));
      return undefined;
    }
    const rv = meta.metadata.resourceVersion;
    const full = this.cache
      .informersOf(kind)
      .find((ki) => !ki.options.metadataOnly && ki.synced)
      ?.get(key);
    if (full && full.metadata.resourceVersion === rv) return full as T;
    const id = this.id(kind, key);
    const memo = this.fetched.get(id);
    if (memo && memo.metadata.resourceVersion === rv) return memo as T;
    const got = await client.find(kind, key);
    if (got) this.fetched.set(id, got);
    else this.fetched.delete(id);
    return got;
  }

  private id(kind: Kind, key: ObjectKey) {
    return `${kindKey(kind)} ${key.namespace ?? ''}/${key.name}`;
  }
}
