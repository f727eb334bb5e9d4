import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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

  it('scans writes without keeping them: only completed writes that match the filter, each once, a scan going on where the last stopped', () => {
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
    const log = new AuditLog(path);
    const scan = () => log.scanWrites({ since: new Date('2026-11-28T00:00:01Z') }, (e) => seen.push(`${e.verb} ${e.objectRef?.resource}`));
    scan();
    expect(seen).toEqual(['create secrets', 'delete pods']);
    expect(new AuditLog(path).writes({ since: new Date('2026-11-28T00:00:01Z'), resource: 'secrets' }).map((e) => e.verb)).toEqual(['create']);
    // A later scan goes on where the last one stopped: what was logged since, each line once, and
    // a line still being written only once it is whole.
    appendFileSync(
      path,
      `${ev('patch', 'ResponseComplete', '2026-11-28T00:00:06Z', 'certificates')}\n${ev('delete', 'ResponseComplete', '2026-11-28T00:00:07Z').slice(0, 30)}`,
    );
    scan();
    expect(seen).toEqual(['create secrets', 'delete pods', 'patch certificates']);
    appendFileSync(path, `${ev('delete', 'ResponseComplete', '2026-11-28T00:00:07Z').slice(30)}\n`);
    scan();
    scan();
    expect(seen).toEqual(['create secrets', 'delete pods', 'patch certificates', 'delete secrets']);
  });
});
