import { Secret, type Cache, type ObjectKey, type ObjectOf, type ReadClient } from '@opkit/runtime';

export type SecretObject = ObjectOf<typeof Secret>;

/**
 * Secrets this operator writes or was pointed at carry its "for attention of" label (the API
 * mode's: `controller.cert-manager.io/fao` in cert-manager mode) and are cached in full.
 */
export const labelledSecrets = (faoLabel: string) => ({ labelSelector: `${faoLabel}=true` });
/** Every other Secret is cached as metadata only: enough to notice it, without its data in memory. */
export const METADATA = { metadataOnly: true };

/**
 * Reads a Secret the way cert-manager's filtered cache does: from the full cache when it is ours;
 * otherwise, if the metadata cache knows it, one GET, remembered until its resourceVersion changes
 * (so a CA Secret signing a thousand certificates is fetched once, not a thousand times).
 */
export class SecretReader {
  private readonly fetched = new Map<string, SecretObject>();

  constructor(
    private readonly cache: Cache,
    private readonly client: ReadClient,
    /** The informer of labelled Secrets (CertApi.labelled). */
    private readonly labelled: { labelSelector: string },
  ) {}

  async read(key: Required<ObjectKey>): Promise<SecretObject | undefined> {
    const full = await this.cache.get(Secret, key, this.labelled);
    if (full) return full;
    const meta = await this.cache.get(Secret, key, METADATA);
    if (!meta) return undefined;
    const id = `${key.namespace}/${key.name}`;
    const cached = this.fetched.get(id);
    if (cached && cached.metadata.resourceVersion === meta.metadata.resourceVersion) return cached;
    const got = await this.client.find(Secret, key);
    if (got) this.fetched.set(id, got);
    else this.fetched.delete(id);
    return got;
  }
}

export const secretData = (s: SecretObject | undefined, key: string): string | undefined => {
  const v = s?.data?.[key];
  return v ? Buffer.from(v, 'base64').toString('utf8') : undefined;
};
