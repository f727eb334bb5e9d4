import { describe, expect, it } from 'vitest';
import { CronError, parseCron } from './cron.js';
import { openAt, parseWindows, type WindowSpec } from './windows.js';

const weekdayMornings: WindowSpec = { cron: '0 8 * * MON-FRI', timezone: 'Europe/Berlin', windowDuration: '4h' };
const iso = (t: number | undefined) => (t === undefined ? undefined : new Date(t).toISOString());

describe('openAt', () => {
  const windows = parseWindows([weekdayMornings]);
  it.each<[string, string, string | undefined]>([
    ['inside a window: at once', '2026-11-27T09:30:00Z', '2026-11-27T09:30:00.000Z'],
    ['at the opening', '2026-11-27T07:00:00Z', '2026-11-27T07:00:00.000Z'],
    ['just before the close: at once', '2026-11-27T10:59:59Z', '2026-11-27T10:59:59.000Z'],
    ['at the close: the next window (Monday)', '2026-11-27T11:00:00Z', '2026-11-30T07:00:00.000Z'],
    ['on a Saturday: Monday 08:00 in Berlin', '2026-11-28T12:00:00Z', '2026-11-30T07:00:00.000Z'],
  ])('%s', (_name, t, want) => {
    expect(iso(openAt(windows, Date.parse(t)))).toBe(want);
  });
  it('takes the earliest of several windows', () => {
    const both = parseWindows([weekdayMornings, { cron: '0 12 * * SAT', windowDuration: '1h' }]);
    expect(iso(openAt(both, Date.parse('2026-11-28T00:00:00Z')))).toBe('2026-11-28T12:00:00.000Z');
  });
  it('gives none for a schedule that never fires (parseWindows refuses those; this one is made by hand)', () => {
    expect(openAt([{ cron: parseCron('0 0 30 2 *'), timeZone: 'UTC', durationMs: 3_600_000 }], Date.parse('2026-11-27T00:00:00Z'))).toBeUndefined();
  });
});

describe('parseWindows', () => {
  it.each<[string, WindowSpec, RegExp]>([
    ['a bad schedule', { cron: '0 25 * * *', windowDuration: '1h' }, /^renewal\.windows\[0\]: hour: 25 is outside 0-23$/],
    [
      'an unknown zone',
      { cron: '0 1 * * *', timezone: 'Europe/Atlantis', windowDuration: '1h' },
      /^renewal\.windows\[0\]: unknown time zone "Europe\/Atlantis"/,
    ],
    ['a zero duration', { cron: '0 1 * * *', windowDuration: '0s' }, /^renewal\.windows\[0\]\.windowDuration must be at least a minute$/],
    ['a duration that does not parse', { cron: '0 1 * * *', windowDuration: 'soon' }, /is not a duration$/],
    ['a schedule that never fires', { cron: '0 0 31 4,6,9,11 *', windowDuration: '1h' }, /^renewal\.windows\[0\]: the schedule never fires$/],
  ])('refuses %s, naming it', (_name, spec, message) => {
    expect(() => parseWindows([spec])).toThrow(CronError);
    expect(() => parseWindows([spec])).toThrow(message);
  });
});
