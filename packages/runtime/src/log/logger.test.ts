import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, type LoggerOptions } from './logger.js';

/** The raw lines a logger writes: as a log pipeline receives them, before any JSON parser. */
function linesOf(options: LoggerOptions, write: (log: ReturnType<typeof createLogger>) => void): [string, ...string[]] {
  const out = new PassThrough();
  let text = '';
  out.on('data', (d: Buffer) => (text += d.toString()));
  const log = createLogger({ ...options, destination: out });
  write(log);
  log.flush();
  const [first, ...rest] = text.split('\n').filter(Boolean);
  if (first === undefined) throw new Error('nothing was logged');
  return [first, ...rest];
}

/** The keys of one JSON object line, duplicates kept (JSON.parse would keep only the last). */
const topLevelKeys = (line: string) => [...line.matchAll(/[{,]"([^"]+)":/g)].map((m) => m[1]);

describe('createLogger', () => {
  it("names the operator `logger`, so a reconcile line's `name` is the object's alone", () => {
    const [line] = linesOf({ name: 'memcached-operator' }, (log) =>
      log.child({ controller: 'memcached' }).child({ namespace: 'cache', name: 'sample', reconcileID: 'r1' }).info('reconciled'),
    );
    const keys = topLevelKeys(line);
    expect(keys.filter((k) => k === 'name')).toEqual(['name']);
    expect(JSON.parse(line)).toMatchObject({ logger: 'memcached-operator', controller: 'memcached', namespace: 'cache', name: 'sample', msg: 'reconciled' });
  });

  it("writes pino's number levels and epoch times by default, names and ISO 8601 when asked", () => {
    const [pinoLine] = linesOf({ name: 'op' }, (log) => log.warn('w'));
    expect(JSON.parse(pinoLine)).toMatchObject({ level: 40, time: expect.any(Number) });
    const [conventional] = linesOf({ name: 'op', levelEncoding: 'string', timeEncoding: 'iso8601' }, (log) => log.warn('w'));
    const parsed = JSON.parse(conventional) as { level: string; time: string };
    expect(parsed.level).toBe('warn');
    expect(new Date(parsed.time).toISOString()).toBe(parsed.time);
    expect(topLevelKeys(conventional).filter((k) => k === 'level' || k === 'time')).toEqual(['level', 'time']);
  });

  it('still blanks secret data in logged objects', () => {
    const [line] = linesOf({ name: 'op', levelEncoding: 'string' }, (log) => log.info({ secret: { data: { 'tls.key': 'x' } } }, 'seen'));
    expect(line).not.toContain('tls.key');
    expect(JSON.parse(line)).toMatchObject({ secret: { data: '[redacted]' } });
  });
});
