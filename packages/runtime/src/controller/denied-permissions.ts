import type { Logger } from 'pino';
import type { Clock } from '../clock/clock.js';
import type { Client } from '../client/client.js';
import { ApiError } from '../client/errors.js';
import { parseResourcePath } from '../client/kind.js';
import { describePermission, missingPermissions, type Permission } from '../manager/rbac-check.js';

/**
 * The permission a 403 refused, read from the request it answered: its verb from the method, the
 * resource from the path (`/api/v1/namespaces/ns/configmaps/name`, `/apis/group/version/…`).
 * Undefined for a path that names no resource.
 */
export function deniedPermission(method: string, path: string): Permission | undefined {
  const target = parseResourcePath(path);
  if (!target) return undefined;
  const { group, namespace, resource, name, subresource } = target;
  const verb = (
    {
      GET: name ? 'get' : 'list',
      WATCH: 'watch',
      POST: 'create',
      PUT: 'update',
      PATCH: 'patch',
      DELETE: name ? 'delete' : 'deletecollection',
    } as Record<string, string>
  )[method.toUpperCase()];
  if (!verb) return undefined;
  return { verb, group, resource, subresource, namespace, name: verb === 'create' && !subresource ? undefined : name };
}

export const deniedPermissionOf = (err: unknown): Permission | undefined =>
  err instanceof ApiError && err.status === 403 ? deniedPermission(err.method, err.path) : undefined;

/** How often a denied permission is asked about again. */
const RECHECK_MS = 5_000;

/**
 * Keys that failed on a denied permission wait for the permission, not for their backoff: every
 * few seconds one SelfSubjectAccessReview per denied permission (which any identity may make, and
 * which costs the API server little) asks whether it is granted now, and when it is, its keys are
 * retried at once. Without it, a role fixed by the cluster's admin took effect at the next backoff
 * step, up to two minutes on; watching roles and bindings instead would need rights to read every
 * role in the cluster. One per controller term.
 */
export class DeniedPermissions {
  private readonly waiting = new Map<string, { permission: Permission; keys: Set<string> }>();
  private loop?: Promise<void>;
  private readonly abort = new AbortController();

  constructor(
    private readonly client: Client,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly onGranted: (keys: string[]) => void,
    private readonly recheckMs = RECHECK_MS,
  ) {}

  /** `key` failed on `permission`: retry it as soon as the permission is granted. */
  add(key: string, permission: Permission): void {
    const id = describePermission(permission);
    let entry = this.waiting.get(id);
    if (!entry) this.waiting.set(id, (entry = { permission, keys: new Set() }));
    entry.keys.add(key);
    this.loop ??= this.run();
  }

  /** `key` succeeded (or went away): it waits for nothing. */
  forget(key: string): void {
    for (const [id, entry] of this.waiting) {
      entry.keys.delete(key);
      if (!entry.keys.size) this.waiting.delete(id);
    }
  }

  /** Permissions being waited for, and how many keys wait for each (for /debug/queue). */
  inspect(): { permission: string; keys: number }[] {
    return [...this.waiting].map(([permission, e]) => ({ permission, keys: e.keys.size }));
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
  }

  private async run(): Promise<void> {
    const client = this.client.withSignal(this.abort.signal);
    while (this.waiting.size && !this.abort.signal.aborted) {
      await this.clock.sleep(this.recheckMs, this.abort.signal);
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- aborted while awaiting: TS keeps the narrowing from before the await (TypeScript#9998)
      if (this.abort.signal.aborted) break;
      const entries = [...this.waiting.values()];
      const missing = await missingPermissions(
        client,
        entries.map((e) => e.permission),
      ).catch((err: Error) => {
        if (!this.abort.signal.aborted) this.log.debug({ err: err.message }, 'could not ask whether denied permissions are granted now');
        return undefined;
      });
      if (!missing) continue;
      const stillDenied = new Set(missing.map(describePermission));
      for (const [id, entry] of this.waiting) {
        if (stillDenied.has(id)) continue;
        this.waiting.delete(id);
        this.log.info({ permission: id.replace(/^cannot /, ''), keys: entry.keys.size }, 'a denied permission is granted now: retrying what failed on it');
        this.onGranted([...entry.keys]);
      }
    }
    this.loop = undefined;
  }
}
