import { SubjectAccessReview } from '../client/kind.js';
import type { Client } from '../client/client.js';

/** One resource permission of one user, as a SubjectAccessReview asks it. */
export interface Permission {
  /** The user's name, e.g. `system:serviceaccount:<ns>:<name>`. */
  user: string;
  verb: string;
  group: string;
  resource: string;
  namespace?: string;
}

/**
 * Waits until the API server's authorizer answers `allowed` for `permission`, and returns.
 *
 * Why: RBAC is decided from the API server's own informer cache of roles, which an edit reaches a
 * moment later, while a watch event for another object can reach an operator sooner. A test that
 * takes a verb away and at once changes an object may see the operator's write pass under the old
 * role (and wait in vain for the failure); on a loaded machine that is not rare. The same authorizer
 * answers a SubjectAccessReview, so once it says `allowed`, every later request is decided so too.
 */
export async function untilAuthorizerSays(admin: Client, permission: Permission, allowed: boolean, timeoutMs = 30_000): Promise<void> {
  const { user, verb, group, resource, namespace } = permission;
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const review = await admin.create(SubjectAccessReview, {
      metadata: {},
      spec: { user, resourceAttributes: { verb, group, resource, namespace } },
    } as never);
    if (Boolean(review.status?.allowed) === allowed) return;
    if (performance.now() > deadline) {
      throw new Error(`the authorizer still says ${allowed ? 'no' : 'yes'} to ${user} ${verb} ${resource}${group ? `.${group}` : ''} after ${timeoutMs} ms`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
