/**
 * Cron schedules as cert-manager's renewal windows read them (its fork of robfig/cron: five fields,
 * minute hour day-of-month month day-of-week, and the @yearly … @hourly descriptors), evaluated in
 * an IANA time zone. Pure: the next time a schedule fires, from an instant. A tenant writes these,
 * so parsing is bounded and refuses with CronError.
 *
 * Semantics kept from robfig/cron: `*` and `?` are every value; `a-b`, `a/n` (from a to the end),
 * `a-b/n`, `*\/n` and lists; month names JAN–DEC and day names SUN–SAT; day-of-week 0–6 (7 is
 * refused, as there); when both day fields are restricted a day matches either (Vixie cron),
 * otherwise both (a field is unrestricted when written `*` or `?` without a step above 1). Refused, unlike robfig: `@every` (a constant delay from whenever the operator
 * looks is no calendar window).
 */

export class CronError extends Error {
  override name = 'CronError';
}

export interface Cron {
  minutes: readonly number[];
  hours: readonly number[];
  days: ReadonlySet<number>;
  months: ReadonlySet<number>;
  weekdays: ReadonlySet<number>;
  /** A day field written as `*` or `?`: days then match on both fields (see above). */
  anyDay: boolean;
  anyWeekday: boolean;
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const WEEKDAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];
const DESCRIPTORS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};
const MAX_LENGTH = 200;

function field(text: string, name: string, min: number, max: number, names: string[] = []): { values: number[]; any: boolean } {
  const value = (s: string): number => {
    const i = names.indexOf(s.toUpperCase());
    if (i >= 0) return i + (names === MONTHS ? 1 : 0);
    if (!/^\d{1,2}$/.test(s)) throw new CronError(`${name}: "${s}" is not a number${names.length ? ' or a name' : ''}`);
    const n = Number(s);
    if (n < min || n > max) throw new CronError(`${name}: ${n} is outside ${min}-${max}`);
    return n;
  };
  const out = new Set<number>();
  // robfig/cron's star bit: a part written `*` or `?` with no step above 1 (`*/2` is a restriction).
  let any = false;
  for (const part of text.split(',')) {
    const [range, stepText, extra] = part.split('/');
    if (extra !== undefined || range === undefined || range === '') throw new CronError(`${name}: "${part}" is not a value, range or step`);
    const step = stepText === undefined ? 1 : Number(stepText);
    if (stepText !== undefined && !(/^\d{1,2}$/.test(stepText) && step >= 1)) throw new CronError(`${name}: the step "${stepText}" is not a positive number`);
    let lo: number;
    let hi: number;
    if (range === '*' || range === '?') {
      [lo, hi] = [min, max];
      if (step <= 1) any = true;
    } else {
      const [a, b, more] = range.split('-');
      if (more !== undefined) throw new CronError(`${name}: "${range}" is not a range`);
      lo = value(a!);
      hi = b !== undefined ? value(b) : stepText !== undefined ? max : lo;
      if (hi < lo) throw new CronError(`${name}: the range ${range} ends before it starts`);
    }
    for (let v = lo; v <= hi; v += step) out.add(v);
  }
  return { values: [...out].sort((a, b) => a - b), any };
}

export function parseCron(expression: string): Cron {
  if (expression.length > MAX_LENGTH) throw new CronError(`the schedule is longer than ${MAX_LENGTH} characters`);
  const text = expression.trim();
  if (text.startsWith('@every')) throw new CronError('@every is not a calendar schedule: name the times a window opens (five fields, or @daily, @weekly, …)');
  const expanded = text.startsWith('@') ? DESCRIPTORS[text.toLowerCase()] : text;
  if (!expanded) throw new CronError(`unknown descriptor ${text}`);
  const parts = expanded.split(/\s+/);
  if (parts.length !== 5) throw new CronError(`expected five fields (minute hour day-of-month month day-of-week), got ${parts.length}`);
  const [mi, h, dom, mon, dow] = parts as [string, string, string, string, string];
  const days = field(dom, 'day of month', 1, 31);
  const weekdays = field(dow, 'day of week', 0, 6, WEEKDAYS);
  return {
    minutes: field(mi, 'minute', 0, 59).values,
    hours: field(h, 'hour', 0, 23).values,
    days: new Set(days.values),
    months: new Set(field(mon, 'month', 1, 12, MONTHS).values),
    weekdays: new Set(weekdays.values),
    anyDay: days.any,
    anyWeekday: weekdays.any,
  };
}

// --- time zones: the wall clock of an instant, and the instant of a wall clock -------------------

const formats = new Map<string, Intl.DateTimeFormat>();
/** The formatter of a time zone; an unknown zone is refused with CronError. */
function formatOf(timeZone: string): Intl.DateTimeFormat {
  let f = formats.get(timeZone);
  if (!f) {
    try {
      f = new Intl.DateTimeFormat('en-US', {
        timeZone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
      });
    } catch {
      throw new CronError(`unknown time zone "${timeZone}" (an IANA name such as Europe/Berlin)`);
    }
    formats.set(timeZone, f);
  }
  return f;
}

export function checkTimeZone(timeZone: string): void {
  formatOf(timeZone);
}

interface Wall {
  y: number;
  mo: number;
  d: number;
  h: number;
  mi: number;
}

function wallOf(t: number, timeZone: string): Wall {
  const p = Object.fromEntries(
    formatOf(timeZone)
      .formatToParts(t)
      .map((x) => [x.type, x.value]),
  );
  return { y: Number(p.year), mo: Number(p.month), d: Number(p.day), h: Number(p.hour), mi: Number(p.minute) };
}

const wallMs = (w: Wall) => Date.UTC(w.y, w.mo - 1, w.d, w.h, w.mi);
const sameWall = (a: Wall, b: Wall) => a.y === b.y && a.mo === b.mo && a.d === b.d && a.h === b.h && a.mi === b.mi;

/**
 * The instant a wall-clock minute names in `timeZone`: the earlier of two when the clock goes back
 * (the minute happens twice), undefined when it goes forward over it (the minute never happens).
 */
function instantOf(w: Wall, timeZone: string): number | undefined {
  const guess = wallMs(w);
  const candidates = new Set<number>();
  // The zone's offset near the guess, tried from both sides of a change (offsets differ by < 1 day).
  for (const probe of [guess - 86_400_000, guess, guess + 86_400_000]) {
    const offset = wallMs(wallOf(probe, timeZone)) - Math.floor(probe / 60_000) * 60_000;
    candidates.add(guess - offset);
  }
  const valid = [...candidates].filter((t) => sameWall(wallOf(t, timeZone), w)).sort((a, b) => a - b);
  return valid[0];
}

const daysIn = (y: number, mo: number) => new Date(Date.UTC(y, mo, 0)).getUTCDate();
const weekdayOf = (y: number, mo: number, d: number) => new Date(Date.UTC(y, mo - 1, d)).getUTCDay();

function dayMatches(c: Cron, y: number, mo: number, d: number): boolean {
  const dom = c.days.has(d);
  const dow = c.weekdays.has(weekdayOf(y, mo, d));
  return c.anyDay || c.anyWeekday ? dom && dow : dom || dow;
}

/** How far ahead a schedule is searched, as robfig/cron does: one that fires later than this never does. */
export const SEARCH_YEARS = 5;

/** The first minute at or after `from` (ms) at which the schedule fires in `timeZone`, or undefined within SEARCH_YEARS. */
export function nextFire(c: Cron, from: number, timeZone = 'UTC'): number | undefined {
  const start = wallOf(from, timeZone);
  let { y, mo, d } = start;
  const last = Date.UTC(y + SEARCH_YEARS, mo - 1, d);
  for (let day = 0; Date.UTC(y, mo - 1, d) <= last; day++) {
    if (day > 0 && ++d > daysIn(y, mo)) {
      d = 1;
      if (++mo > 12) [mo, y] = [1, y + 1];
    }
    if (!c.months.has(mo)) {
      // Skip to the month's last day: the loop's increment opens the next month.
      d = daysIn(y, mo);
      continue;
    }
    if (!dayMatches(c, y, mo, d)) continue;
    for (const h of c.hours) {
      if (day === 0 && h < start.h) continue;
      for (const mi of c.minutes) {
        if (day === 0 && h === start.h && mi < start.mi) continue;
        const t = instantOf({ y, mo, d, h, mi }, timeZone);
        if (t !== undefined && t >= from) return t;
      }
    }
  }
  return undefined;
}
