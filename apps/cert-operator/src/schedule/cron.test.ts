import { describe, expect, it } from 'vitest';
import { CronError, nextFire, parseCron } from './cron.js';

const at = (s: string) => Date.parse(s);
const next = (expr: string, from: string, tz?: string) => {
  const t = nextFire(parseCron(expr), at(from), tz);
  return t === undefined ? undefined : new Date(t).toISOString();
};

describe('parseCron', () => {
  it.each<[string, string]>([
    ['four fields', '0 9 * *'],
    ['six fields', '0 0 9 * * 1'],
    ['a minute of 60', '60 * * * *'],
    ['day of week 7 (refused, as robfig/cron does)', '0 0 * * 7'],
    ['a range that ends before it starts', '0 0 * * FRI-MON'],
    ['a step of zero', '*/0 * * * *'],
    ['an unknown name', '0 0 * FOO *'],
    ['@every', '@every 1h'],
    ['an unknown descriptor', '@fortnightly'],
    ['a negative number', '-1 * * * *'],
    ['an enormous expression', `${'1,'.repeat(150)}1 * * * *`],
  ])('refuses %s', (_name, expr) => {
    expect(() => parseCron(expr)).toThrow(CronError);
  });
  it('reads names, ranges, steps and lists', () => {
    const c = parseCron('*/15 9-17 1,15 JAN-MAR mon-fri');
    expect(c.minutes).toEqual([0, 15, 30, 45]);
    expect(c.hours).toEqual([9, 10, 11, 12, 13, 14, 15, 16, 17]);
    expect([...c.days]).toEqual([1, 15]);
    expect([...c.months]).toEqual([1, 2, 3]);
    expect([...c.weekdays]).toEqual([1, 2, 3, 4, 5]);
    expect(parseCron('5/20 * * * *').minutes).toEqual([5, 25, 45]);
  });
});

describe('nextFire', () => {
  it.each<[string, string, string, string | undefined, string | undefined]>([
    ['every day at 09:00, before it', '0 9 * * *', '2026-11-27T08:30:00Z', undefined, '2026-11-27T09:00:00.000Z'],
    ['every day at 09:00, at it (inclusive)', '0 9 * * *', '2026-11-27T09:00:00Z', undefined, '2026-11-27T09:00:00.000Z'],
    ['every day at 09:00, a second after it', '0 9 * * *', '2026-11-27T09:00:01Z', undefined, '2026-11-28T09:00:00.000Z'],
    ['weekdays at 09:00, from a Friday evening', '0 9 * * MON-FRI', '2026-11-27T18:00:00Z', undefined, '2026-11-30T09:00:00.000Z'],
    ['the 31st, from November', '0 0 31 * *', '2026-11-27T00:00:00Z', undefined, '2026-12-31T00:00:00.000Z'],
    ['29 February, from 2026', '0 0 29 2 *', '2026-11-27T00:00:00Z', undefined, '2028-02-29T00:00:00.000Z'],
    ['30 February never fires', '0 0 30 2 *', '2026-11-27T00:00:00Z', undefined, undefined],
    ['both day fields restricted: either matches (the 1st, or a Monday)', '0 0 1 * MON', '2026-11-27T00:00:00Z', undefined, '2026-11-30T00:00:00.000Z'],
    [
      'one day field any: both must match (a Monday that is the 1st... any Monday)',
      '0 0 * * MON',
      '2026-11-27T00:00:00Z',
      undefined,
      '2026-11-30T00:00:00.000Z',
    ],
    ['day of month with ? for day of week: only the 1st', '0 0 1 * ?', '2026-11-27T00:00:00Z', undefined, '2026-12-01T00:00:00.000Z'],
    ['*/2 restricts (robfig): odd days or Mondays, so Sunday the 29th', '0 0 */2 * MON', '2026-11-28T00:00:01Z', undefined, '2026-11-29T00:00:00.000Z'],
    ['*/1 does not: every day and Mondays, so Monday the 30th', '0 0 */1 * MON', '2026-11-28T00:00:01Z', undefined, '2026-11-30T00:00:00.000Z'],
    ['09:00 in Berlin (UTC+1 in winter)', '0 9 * * *', '2026-11-27T09:00:00Z', 'Europe/Berlin', '2026-11-28T08:00:00.000Z'],
    ['09:00 in Berlin (UTC+2 in summer)', '0 9 * * *', '2026-07-01T00:00:00Z', 'Europe/Berlin', '2026-07-01T07:00:00.000Z'],
    ['02:30 on the night Berlin skips it: the next night', '30 2 * * *', '2026-03-29T00:00:00Z', 'Europe/Berlin', '2026-03-30T00:30:00.000Z'],
    ['02:30 on the night Berlin has it twice: the first', '30 2 * * *', '2026-10-25T00:00:00Z', 'Europe/Berlin', '2026-10-25T00:30:00.000Z'],
    ['@weekly: Sunday midnight', '@weekly', '2026-11-27T00:00:00Z', undefined, '2026-11-29T00:00:00.000Z'],
    ['in a zone east of the date line', '0 0 * * *', '2026-11-27T00:00:00Z', 'Pacific/Kiritimati', '2026-11-27T10:00:00.000Z'],
  ])('%s', (_name, expr, from, tz, want) => {
    expect(next(expr, from, tz)).toBe(want);
  });

  it('refuses an unknown time zone', () => {
    expect(() => nextFire(parseCron('0 0 * * *'), 0, 'Mars/Olympus')).toThrow(CronError);
  });
});
