import { replicaOf, type AuditEvent } from '@opkit/testing';
import { parseAssignment, type Assignment } from '../sharding/assignment.js';
import { ASSIGNMENT_ANNOTATION } from '../sharding/member.js';

const WRITES = new Set(['create', 'update', 'patch', 'delete']);

/** An audit timestamp in microseconds (the API server writes six fractional digits; Date.parse keeps three). */
export function auditMicros(t: string): bigint {
  const m = /^(.{19})(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(t);
  if (!m) throw new Error(`not an audit timestamp: ${t}`);
  const seconds = Date.parse(`${m[1]}${m[3]}`);
  return BigInt(seconds) * 1000n + BigInt((m[2] ?? '').padEnd(6, '0').slice(0, 6));
}

export interface ShardWriteCheck {
  /** The operator's user agent, `<operator>/opkit`; each replica's adds its identity: `<operator>/opkit (<identity>)`. */
  userAgent: string;
  /** The ring's assignment Lease (`<ring>-shards`), whose writes the audit log keeps with their bodies. */
  assignment: { namespace: string; name: string };
  /**
   * Where a write falls in the hash space: its primary object's uid (or namespace) hashed; undefined
   * for writes that are nobody's part (Leases, Events).
   */
  placeOf(e: AuditEvent): bigint | undefined;
}

export interface OutsideWrite {
  write: string;
  by: string;
  /** The owner of that point in the assignment of the time, or `(nobody)`. */
  owner: string;
  at: string;
}

/**
 * The writes a sharded operator's replicas made outside their part of the hash space, as the API
 * server saw them. For each write, the assignment last committed before the API server received it
 * must name the writer as owner of the point the object sits at (reconciling it, or draining it
 * before its handover): a replica may write only what it owns, and the ring hands a part on only
 * once its owner stopped (or after its Lease expired, which comes after it stopped itself). A write
 * outside is two replicas possibly writing one object at once. Needs the audit log to keep Lease
 * writes with their bodies (the test control plane's policy does).
 */
export function writesOutsideShards(events: readonly AuditEvent[], o: ShardWriteCheck): OutsideWrite[] {
  const mine = events.filter((e) => e.stage === 'ResponseComplete' && WRITES.has(e.verb) && e.userAgent?.startsWith(o.userAgent));
  const history: { at: bigint; assignment: Assignment }[] = [];
  for (const e of mine) {
    const ref = e.objectRef;
    if (ref?.resource !== 'leases' || ref.namespace !== o.assignment.namespace || ref.name !== o.assignment.name) continue;
    if ((e.responseStatus?.code ?? 0) >= 300) continue;
    const text = e.responseObject?.metadata?.annotations?.[ASSIGNMENT_ANNOTATION];
    const assignment = text === undefined ? undefined : parseAssignment(text);
    if (assignment) history.push({ at: auditMicros(e.stageTimestamp), assignment });
  }
  history.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  const assignmentAt = (t: bigint) => {
    let current: Assignment | undefined;
    for (const h of history) {
      if (h.at > t) break;
      current = h.assignment;
    }
    return current;
  };
  const out: OutsideWrite[] = [];
  for (const e of mine) {
    const point = o.placeOf(e);
    if (point === undefined) continue;
    const by = replicaOf(e);
    const owner = assignmentAt(auditMicros(e.requestReceivedTimestamp))?.find((s) => s.start <= point && point < s.end)?.owner;
    if (owner === by) continue;
    const ref = e.objectRef;
    out.push({
      write: `${e.verb} ${ref?.resource ?? '?'}${ref?.subresource ? `/${ref.subresource}` : ''} ${ref?.namespace ? `${ref.namespace}/` : ''}${ref?.name ?? ''}`,
      by,
      owner: owner ?? '(nobody)',
      at: e.requestReceivedTimestamp,
    });
  }
  return out;
}
