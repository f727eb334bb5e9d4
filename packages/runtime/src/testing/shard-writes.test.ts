import type { AuditEvent } from '@opkit/testing';
import { describe, expect, it } from 'vitest';
import { formatAssignment, handOver, plan, ring, type Assignment } from '../sharding/assignment.js';
import { ASSIGNMENT_ANNOTATION } from '../sharding/member.js';
import { SPACE_END } from '../sharding/ranges.js';
import { auditMicros, writesOutsideShards } from './shard-writes.js';

const UA = 'memcached-operator/opkit';
const at = (us: number) => `2026-11-27T15:00:00.${String(us).padStart(6, '0')}Z`;
let seq = 0;
const event = (e: Partial<AuditEvent> & { received: number; done?: number }): AuditEvent => ({
  auditID: String(++seq),
  stage: 'ResponseComplete',
  verb: 'update',
  requestURI: '/',
  user: { username: 'system:serviceaccount:ops:memcached-operator' },
  responseStatus: { code: 200 },
  ...e,
  requestReceivedTimestamp: at(e.received),
  stageTimestamp: at(e.done ?? e.received + 1),
});
const assignmentWrite = (by: string, a: Assignment, done: number, code = 200) =>
  event({
    userAgent: `${UA} (${by})`,
    objectRef: { resource: 'leases', namespace: 'ops', name: 'memcached-operator-shards' },
    responseObject: { metadata: { annotations: { [ASSIGNMENT_ANNOTATION]: formatAssignment(a) } } },
    responseStatus: { code },
    received: done - 1,
    done,
  });
/** A write of a Memcached's status whose object sits at `point` (its name says where). */
const write = (by: string, point: bigint, received: number) =>
  event({ userAgent: `${UA} (${by})`, objectRef: { resource: 'memcacheds', subresource: 'status', namespace: 'shop', name: `at-${point}` }, received });
const check = (events: AuditEvent[]) =>
  writesOutsideShards(events, {
    userAgent: UA,
    assignment: { namespace: 'ops', name: 'memcached-operator-shards' },
    placeOf: (e) => (e.objectRef?.resource === 'memcacheds' ? BigInt(e.objectRef.name!.slice(3)) : undefined),
  });

// a and b split the space; the coordinator then asks a to hand part of it to c.
const two = ring(['a', 'b'], 4);
const pointOf = (a: Assignment, owner: string) => a.find((s) => s.owner === owner)!.start;
const aPoint = pointOf(two, 'a');
const bPoint = pointOf(two, 'b');

describe('writes outside the shards, from the audit log', () => {
  it('reads microseconds, which Date.parse drops', () => {
    expect(auditMicros('2026-11-27T15:00:00.000100Z') < auditMicros('2026-11-27T15:00:00.000200Z')).toBe(true);
    expect(auditMicros('2026-11-27T15:00:01Z') - auditMicros('2026-11-27T15:00:00.999999Z')).toBe(1n);
  });

  it('finds none when each replica writes only what the assignment of the time gives it', () => {
    expect(check([assignmentWrite('a', two, 10), write('a', aPoint, 20), write('b', bPoint, 30)])).toEqual([]);
  });

  it("finds a write to another replica's part, and one made before any assignment", () => {
    const found = check([write('a', aPoint, 5), assignmentWrite('a', two, 10), write('b', aPoint, 20)]);
    expect(found).toEqual([
      { write: `update memcacheds/status shop/at-${aPoint}`, by: 'a', owner: '(nobody)', at: at(5) },
      { write: `update memcacheds/status shop/at-${aPoint}`, by: 'b', owner: 'a', at: at(20) },
    ]);
  });

  it('lets the owner write while it drains a part, and only the new owner once the handover is committed, to the microsecond', () => {
    const three = ring(['a', 'b', 'c'], 4);
    const marked = plan(two, three, new Set(['a', 'b', 'c']));
    const moving = marked.find((s) => s.next === 'c')!;
    const from = moving.owner!;
    const handed = handOver(marked, from, [{ start: moving.start, end: moving.end }]);
    const events = [
      assignmentWrite('a', two, 10),
      assignmentWrite('a', marked, 20),
      write(from, moving.start, 25), // draining: still its owner's
      assignmentWrite(from, handed, 30),
      write('c', moving.start, 29), // before the handover was committed
      write(from, moving.start, 31), // after it
      write('c', moving.start, 32),
    ];
    expect(check(events).map((w) => `${w.by}@${w.at}`)).toEqual([`c@${at(29)}`, `${from}@${at(31)}`]);
  });

  it('ignores failed assignment writes, other operators, and writes that are nobody\u2019s part', () => {
    const other = { ...write('b', aPoint, 20), userAgent: 'cdn-operator/opkit (x)' };
    const lease = event({ userAgent: `${UA} (b)`, objectRef: { resource: 'leases', namespace: 'ops', name: 'memcached-operator-member-b' }, received: 21 });
    const conflict = assignmentWrite('b', ring(['b'], 4), 15, 409);
    expect(check([assignmentWrite('a', two, 10), conflict, other, lease, write('a', aPoint, 22)])).toEqual([]);
    expect(SPACE_END > bPoint).toBe(true);
  });
});
