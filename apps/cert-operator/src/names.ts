import { createHash } from 'node:crypto';

/** The longest name a Kubernetes object may have (a DNS subdomain). */
export const MAX_NAME = 253;

/**
 * The name of an object made for `parent` (a Certificate's request, a request's Order, an Order's
 * Challenge): `<parent>-<suffix>`, or, when that is longer than a name may be, the parent cut
 * short and a hash of the whole parent inserted (`<parent…>-<hash>-<suffix>`). Deterministic, so
 * a retry finds the object it made; the suffix stays last, and distinct parents stay distinct.
 */
export function childName(parent: string, suffix: string): string {
  const plain = `${parent}-${suffix}`;
  if (plain.length <= MAX_NAME) return plain;
  const hash = createHash('sha256').update(parent).digest('hex').slice(0, 8);
  // A subdomain's labels end in a letter or digit: no '-' or '.' where the cut falls.
  const kept = parent.slice(0, MAX_NAME - suffix.length - hash.length - 2).replace(/[-.]+$/, '');
  return `${kept}-${hash}-${suffix}`;
}
