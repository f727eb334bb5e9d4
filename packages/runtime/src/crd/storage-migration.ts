import type { Logger } from 'pino';
import type { Clock } from '../clock/clock.js';
import type { Client } from '../client/client.js';
import { isConflict, isNotFound } from '../client/errors.js';
import { CustomResourceDefinition, type Kind } from '../client/kind.js';
import type { KubeObject } from '../client/types.js';
import type { Runnable } from '../manager/runnables.js';
import { rule, type PolicyRule } from '../rbac/rules.js';
import type { VersionedResource } from './versioned-resource.js';

interface CrdStatus {
  status?: { storedVersions?: string[] };
}

/** Objects rewritten per page; a page's worth of writes, then the next page. */
const PAGE = 200;
/** A progress line at least this often while it works. */
const PROGRESS_EVERY_MS = 10_000;

/**
 * What migrating a versioned resource's storage needs: listing and rewriting every object of the
 * kind, in every namespace (storage is cluster-wide, whatever namespaces the operator watches), and
 * writing the CRD's status.
 */
export function storageMigrationRules(resource: VersionedResource): PolicyRule[] {
  return [
    { ...rule(resource.hub.kind, ['list', 'update']), clusterScoped: true },
    { ...rule(CustomResourceDefinition, ['update'], 'status'), resourceNames: [resource.crd.metadata.name] },
  ];
}

/**
 * Storage-version migration, run by the leader once per term for each versioned resource the
 * manager converts: objects written before the hub version existed stay stored in their old
 * version until something writes them, and the CRD lists every version still stored in
 * `status.storedVersions`. The next release cannot stop serving (or converting) an old version
 * while anything is stored in it. So: every object is rewritten unchanged (the API server encodes
 * it in the storage version: its stored bytes change even though the object does not), then
 * `storedVersions` is trimmed to the storage version, as kube-storage-version-migrator does.
 *
 * Rewriting lists through this operator's own conversion webhook, which is why it runs only once
 * the webhook serves (after the caches synced). A conflict means someone else wrote the object
 * meanwhile: it is stored in the storage version already. New objects always are.
 */
export class StorageVersionMigration implements Runnable {
  readonly name: string;
  readonly needLeaderElection = true;
  private abort?: AbortController;
  private loop?: Promise<void>;

  constructor(
    private readonly resource: VersionedResource,
    private readonly client: Client,
    private readonly log: Logger,
    private readonly clock: Clock,
  ) {
    this.name = `storage-version-migration/${resource.crd.metadata.name}`;
  }

  start(): void {
    this.abort = new AbortController();
    this.loop = this.run(this.abort.signal);
  }

  async stop(): Promise<void> {
    this.abort?.abort();
    await this.loop;
  }

  private async run(signal: AbortSignal): Promise<void> {
    let backoff = 5_000;
    while (!signal.aborted) {
      try {
        await this.migrate(this.client.withSignal(signal), signal);
        return;
      } catch (err) {
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- aborted while awaiting: TS keeps the narrowing from before the await (TypeScript#9998)
        if (signal.aborted) return;
        this.log.warn({ err: (err as Error).message, crd: this.resource.crd.metadata.name, retryInMs: backoff }, 'storage-version migration failed; retrying');
        await this.clock.sleep(backoff, signal);
        backoff = Math.min(backoff * 2, 300_000);
      }
    }
  }

  /** One whole pass. Exposed for tests. */
  async migrate(client: Client, signal?: AbortSignal): Promise<{ rewritten: number; trimmed: string[] }> {
    const crdName = this.resource.crd.metadata.name;
    const storage = this.resource.hub.definition.version;
    const kind = this.resource.hub.kind as Kind<KubeObject>;
    const crd = (await client.get(CustomResourceDefinition, { name: crdName })) as KubeObject & CrdStatus;
    const stored = crd.status?.storedVersions ?? [];
    const old = stored.filter((v) => v !== storage);
    if (!old.length) return { rewritten: 0, trimmed: [] };
    const log = this.log.child({ crd: crdName, storage, stored });
    log.info(`rewriting every ${kind.kind} so that it is stored as ${storage}, not ${old.join(', ')}`);
    let rewritten = 0;
    let lastReport = this.clock.monotonic();
    let cont: string | undefined;
    do {
      const page = await client.list(kind, { limit: PAGE, continue: cont });
      for (const obj of page.items) {
        signal?.throwIfAborted();
        try {
          await client.update(kind, obj);
          rewritten++;
        } catch (err) {
          if (!isConflict(err) && !isNotFound(err)) throw err;
        }
        if (this.clock.monotonic() - lastReport >= PROGRESS_EVERY_MS) {
          lastReport = this.clock.monotonic();
          log.info({ rewritten }, `storage-version migration under way: ${rewritten} rewritten`);
        }
      }
      cont = page.metadata.continue || undefined;
    } while (cont);
    // Everything is stored as `storage` now; the status says so (guarded: a concurrent change wins, and the next pass starts over).
    for (;;) {
      const current = (await client.get(CustomResourceDefinition, { name: crdName })) as KubeObject & CrdStatus;
      try {
        await client.updateStatus(CustomResourceDefinition, { ...current, status: { ...current.status, storedVersions: [storage] } } as never);
        break;
      } catch (err) {
        if (!isConflict(err)) throw err;
      }
    }
    log.info({ rewritten }, `storage-version migration done: every ${kind.kind} is stored as ${storage}, and storedVersions says so`);
    return { rewritten, trimmed: old };
  }
}
