import type { ChallengeObject } from '../../api/acme/v1/challenge.js';
import { FAILED_STATES } from '../../api/acme/v1/order.js';

const final = (c: ChallengeObject) => c.status?.state === 'valid' || (!!c.status?.state && FAILED_STATES.includes(c.status.state));
const keyOf = (c: ChallengeObject) => `${c.metadata.namespace}/${c.metadata.name}`;
const domainOf = (c: ChallengeObject) => `${c.spec.type}/${c.spec.dnsName}`;

/**
 * Admits challenges into processing, as cert-manager's scheduler does: at most `cap` at once, and
 * never two for the same domain and type (two solvers for one name would race for its route).
 * Admissions are reserved in memory until the `processing` flag shows in the cache, so concurrent
 * reconciles cannot both take the last slot.
 */
export class ChallengeScheduler {
  private readonly reserved = new Map<string, string>();

  constructor(readonly cap: number) {}

  admit(ch: ChallengeObject, all: ChallengeObject[]): { ok: true } | { ok: false; reason: string } {
    const me = keyOf(ch);
    const active = new Map<string, string>();
    for (const c of all) if (c.status?.processing && !final(c)) active.set(keyOf(c), domainOf(c));
    for (const [k, d] of this.reserved) active.set(k, d);
    active.delete(me);
    const clash = [...active].find(([, d]) => d === domainOf(ch));
    if (clash) return { ok: false, reason: `waiting: the challenge ${clash[0]} for ${ch.spec.dnsName} is in progress` };
    if (active.size >= this.cap) return { ok: false, reason: `waiting: ${active.size} challenges are being processed (limit ${this.cap})` };
    this.reserved.set(me, domainOf(ch));
    return { ok: true };
  }

  /** The processing flag is visible in the cache now (or the challenge is gone). */
  release(key: { namespace?: string; name: string }) {
    this.reserved.delete(`${key.namespace}/${key.name}`);
  }
}

export { final as isFinalChallenge };
