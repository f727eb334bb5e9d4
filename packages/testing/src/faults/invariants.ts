import { WRITE_VERBS, type AuditEvent, type AuditLog } from '../control-plane/audit.js';

/**
 * What must hold of an operator's writes whatever the API server does to it, read from the API
 * server's own audit log (nothing the operator reports about itself): writes stay bounded while
 * requests fail, and only the replica the Lease names writes.
 */

const objectOf = (e: AuditEvent) => {
  const o = e.objectRef ?? {};
  return `${o.resource ?? '?'}${o.subresource ? `/${o.subresource}` : ''} ${o.namespace ? `${o.namespace}/` : ''}${o.name ?? '(collection)'}`;
};
const at = (t: string) => Date.parse(t);
const fieldManagerOf = (e: AuditEvent) => new URL(e.requestURI, 'http://audit').searchParams.get('fieldManager') ?? undefined;

/** Creates that store nothing (questions to the API server): not writes of the cluster's state. */
const REVIEWS = new Set([
  'selfsubjectaccessreviews',
  'subjectaccessreviews',
  'localsubjectaccessreviews',
  'selfsubjectrulesreviews',
  'tokenreviews',
  'selfsubjectreviews',
]);
/** Writes of objects, not of Events, Leases (leader election's own) or reviews. */
const stateWrite = (e: AuditEvent) => !['events', 'leases'].includes(e.objectRef?.resource ?? '') && !REVIEWS.has(e.objectRef?.resource ?? '');

/** The operator's writes (by user agent prefix) in a window, successful or not: every one cost the API server. */
export function operatorWrites(audit: AuditLog, userAgent: string, since?: Date, until?: Date): AuditEvent[] {
  return audit
    .query({ since, verbs: WRITE_VERBS })
    .filter(
      (e) => e.userAgent?.startsWith(userAgent) && !REVIEWS.has(e.objectRef?.resource ?? '') && (!until || at(e.requestReceivedTimestamp) <= until.getTime()),
    );
}

/** The most writes one object got in any minute-long window, and which object. */
export function maxWritesPerObjectPerMinute(writes: AuditEvent[]): { writes: number; object?: string } {
  const byObject = new Map<string, number[]>();
  for (const e of writes) {
    if (!stateWrite(e)) continue;
    const k = objectOf(e);
    (byObject.get(k) ?? byObject.set(k, []).get(k)!).push(at(e.requestReceivedTimestamp));
  }
  let worst = { writes: 0, object: undefined as string | undefined };
  for (const [object, times] of byObject) {
    times.sort((a, b) => a - b);
    for (let i = 0, j = 0; j < times.length; j++) {
      while (times[j]! - times[i]! >= 60_000) i++;
      if (j - i + 1 > worst.writes) worst = { writes: j - i + 1, object };
    }
  }
  return worst;
}

/** The replica an audited request came from: the identity its user agent names, `<operator>/opkit (<identity>)`. */
export const replicaOf = (e: AuditEvent): string => /\(([^)]+)\)/.exec(e.userAgent ?? '')?.[1] ?? e.userAgent ?? '?';

/**
 * Writes made by a replica the Lease did not name at the time. The holder at any moment is the
 * replica whose lease update succeeded last (from the audit log: a successful update is an acquire
 * or a renewal); each replica's user agent names it (`<operator>/opkit (<identity>)`). A write
 * received while another replica held the lease is a split brain. Writes by the field managers in
 * `everyReplicaFieldManagers` (made by every replica by design, guarded by resourceVersion) are not.
 */
export function writesByNonLeaders(
  audit: AuditLog,
  o: { userAgent: string; lease: { namespace: string; name: string }; since?: Date; everyReplicaFieldManagers?: string[] },
): { write: string; by: string; holder: string; at: string }[] {
  const everyReplica = new Set(o.everyReplicaFieldManagers ?? []);
  const events = audit.query({ since: o.since, verbs: WRITE_VERBS }).filter((e) => e.userAgent?.startsWith(o.userAgent));
  const leaseChanges = events
    .filter(
      (e) =>
        e.objectRef?.resource === 'leases' &&
        e.objectRef.namespace === o.lease.namespace &&
        e.objectRef.name === o.lease.name &&
        (e.responseStatus?.code ?? 0) < 300,
    )
    .map((e) => ({ t: at(e.stageTimestamp), holder: replicaOf(e) }))
    .sort((a, b) => a.t - b.t);
  const holderAt = (t: number) => {
    let h: string | undefined;
    for (const c of leaseChanges) {
      if (c.t > t) break;
      h = c.holder;
    }
    return h;
  };
  const out: { write: string; by: string; holder: string; at: string }[] = [];
  for (const e of events) {
    if (!stateWrite(e) || everyReplica.has(fieldManagerOf(e) ?? '')) continue;
    const holder = holderAt(at(e.requestReceivedTimestamp));
    const by = replicaOf(e);
    // No lease update yet: nobody led, so nobody should have written.
    if (holder !== by) out.push({ write: `${e.verb} ${objectOf(e)}`, by, holder: holder ?? '(nobody)', at: e.requestReceivedTimestamp });
  }
  return out;
}
