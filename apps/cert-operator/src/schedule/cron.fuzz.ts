import { fuzzTargets, refusesWith } from '@opkit/testing/fuzz';
import fc from 'fast-check';
import { CronError, nextFire, parseCron } from './cron.js';

// A tenant writes the schedule of its Certificate's renewal windows: it parses or is refused with
// CronError, and a schedule that parses fires at or after the instant asked about, on a minute, in
// any zone, within the search bound (a schedule that never fires gives undefined, not a hang).

const token = fc.oneof(
  fc.constantFrom('*', '?', '*/5', '1-5', 'MON-FRI', 'jan', '7', '0', '59', '31', '2/3', '1,2,3', '-1', '/', '', '@daily', '@every 1h'),
  fc.nat({ max: 70 }).map(String),
  fc.string({ maxLength: 6 }),
);
const expression = fc.oneof(
  fc.array(token, { minLength: 1, maxLength: 7 }).map((t) => t.join(' ')),
  fc.string({ maxLength: 40 }),
);
const zone = fc.constantFrom('UTC', 'Europe/Berlin', 'America/St_Johns', 'Australia/Lord_Howe', 'Pacific/Kiritimati', 'Nowhere/Void', 'Etc/GMT+12');

export const targets = fuzzTargets({
  name: 'a renewal window schedule: fires at or after the instant, on a minute, or is refused with CronError',
  arbitrary: fc.tuple(expression, fc.integer({ min: 0, max: 4_102_444_800_000 }), zone),
  run: ([expr, from, tz]: [string, number, string]) => {
    const t = nextFire(parseCron(expr), from, tz);
    if (t !== undefined && (t < from || t % 60_000 !== 0)) throw new Error(`${expr} in ${tz} from ${from} fired at ${t}`);
    return t;
  },
  expected: refusesWith(CronError),
});
