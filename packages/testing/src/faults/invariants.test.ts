import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AuditLog, type AuditEvent } from '../control-plane/audit.js';
import { maxWritesPerObjectPerMinute, operatorWrites, writesByNonLeaders } from './invariants.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

/** An audit log holding these events, as the API server writes it (one JSON line each). */
function auditOf(events: Partial<AuditEvent>[]): AuditLog {
  const dir = mkdtempSync(join(tmpdir(), 'audit-'));
  dirs.push(dir);
  const path = join(dir, 'audit.log');
  writeFileSync(
    path,
    events
      .map((e, i) => JSON.stringify({ auditID: `a${i}`, stage: 'ResponseComplete', user: { username: 'op' }, responseStatus: { code: 200 }, ...e }))
      .join('\n') + '\n',
  );
  return new AuditLog(path);
}

const t = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
const by = (replica: string) => `op/opkit (${replica})`;
const lease = (replica: string, s: number, code = 200): Partial<AuditEvent> => ({
  verb: 'update',
  requestURI: '/apis/coordination.k8s.io/v1/namespaces/ns/leases/op',
  userAgent: by(replica),
  objectRef: { resource: 'leases', namespace: 'ns', name: 'op' },
  responseStatus: { code },
  requestReceivedTimestamp: t(s),
  stageTimestamp: t(s),
});
const write = (replica: string, s: number, name = 'cm', fieldManager = 'op'): Partial<AuditEvent> => ({
  verb: 'update',
  requestURI: `/api/v1/namespaces/ns/configmaps/${name}?fieldManager=${fieldManager}`,
  userAgent: by(replica),
  objectRef: { resource: 'configmaps', namespace: 'ns', name },
  requestReceivedTimestamp: t(s),
  stageTimestamp: t(s),
});
const opts = { userAgent: 'op/', lease: { namespace: 'ns', name: 'op' }, everyReplicaFieldManagers: ['op-webhook-certificates'] };

describe('writesByNonLeaders', () => {
  it.each([
    { name: 'the holder writes', events: [lease('a', 1), write('a', 2)], broken: [] },
    { name: 'a write before anyone led', events: [write('a', 1), lease('a', 2)], broken: ['a (nobody)'] },
    { name: 'the old leader writes after the handover', events: [lease('a', 1), lease('b', 5), write('a', 6)], broken: ['a b'] },
    { name: 'a failed lease update hands nothing over', events: [lease('a', 1), lease('b', 5, 409), write('a', 6)], broken: [] },
    {
      name: 'every replica keeps the webhook certificates',
      events: [write('a', 1, 'tls', 'op-webhook-certificates'), lease('b', 2), write('a', 3, 'tls', 'op-webhook-certificates')],
      broken: [],
    },
    { name: 'only that field manager is excepted', events: [lease('b', 2), write('a', 3, 'tls', 'op-other')], broken: ['a b'] },
    { name: 'another operator is not judged', events: [lease('a', 1), { ...write('x', 2), userAgent: 'kubectl/v1.34' }], broken: [] },
  ])('$name', ({ events, broken }) => {
    expect(writesByNonLeaders(auditOf(events), opts).map((w) => `${w.by} ${w.holder}`)).toEqual(broken);
  });
});

describe('maxWritesPerObjectPerMinute', () => {
  it('counts the busiest minute of the busiest object, leases and events aside', () => {
    const audit = auditOf([
      ...[0, 10, 20, 59].map((s) => write('a', s, 'busy')),
      write('a', 61, 'busy'), // 0 s has left the window by now: still four in [10, 61]
      write('a', 5, 'calm'),
      ...[1, 2, 3, 4, 5].map((s) => lease('a', s)),
    ]);
    expect(maxWritesPerObjectPerMinute(operatorWrites(audit, 'op/'))).toEqual({ writes: 4, object: 'configmaps ns/busy' });
  });
});
