import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditLog, linesOf } from './audit.js';

const dir = mkdtempSync(join(tmpdir(), 'opkit-audit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const all = (path: string, from: number, chunk: number) => {
  const lines = [...linesOf(path, from, chunk)];
  return { lines: lines.map((l) => l.text), next: lines.at(-1)?.end ?? from };
};

describe('reading the audit log a chunk at a time', () => {
  it('gives every complete line whatever the chunk size, multi-byte characters across chunks included, and leaves a line being written for next time', () => {
    const path = join(dir, 'a.log');
    const lines = ['{"a":1}', '{"b":"é€😀"}', '{"c":"' + 'x'.repeat(50) + '"}'];
    writeFileSync(path, `${lines.join('\n')}\n{"partial":`);
    for (const chunk of [1, 3, 7, 64, 1 << 20]) {
      const { lines: got, next } = all(path, 0, chunk);
      expect(got).toEqual(lines);
      expect(next).toBe(Buffer.byteLength(`${lines.join('\n')}\n`));
    }
  });

  it('scans writes without keeping them: only completed writes that match the filter', () => {
    const path = join(dir, 'b.log');
    const ev = (verb: string, stage: string, at: string, resource = 'secrets') =>
      JSON.stringify({
        auditID: at,
        stage,
        verb,
        requestURI: '/',
        user: { username: 'op' },
        objectRef: { resource },
        requestReceivedTimestamp: at,
        stageTimestamp: at,
      });
    writeFileSync(
      path,
      [
        ev('create', 'ResponseComplete', '2026-11-28T00:00:00Z'),
        ev('create', 'ResponseComplete', '2026-11-28T00:00:02Z'),
        ev('get', 'ResponseComplete', '2026-11-28T00:00:03Z'),
        ev('update', 'ResponseStarted', '2026-11-28T00:00:04Z'),
        ev('delete', 'ResponseComplete', '2026-11-28T00:00:05Z', 'pods'),
      ].join('\n') + '\n',
    );
    const seen: string[] = [];
    new AuditLog(path).scanWrites({ since: new Date('2026-11-28T00:00:01Z') }, (e) => seen.push(`${e.verb} ${e.objectRef?.resource}`));
    expect(seen).toEqual(['create secrets', 'delete pods']);
    expect(new AuditLog(path).writes({ since: new Date('2026-11-28T00:00:01Z'), resource: 'secrets' }).map((e) => e.verb)).toEqual(['create']);
  });
});
