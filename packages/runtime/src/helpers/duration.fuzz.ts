import { fuzzTargets, refusesWith } from '@opkit/testing/fuzz';
import fc from 'fast-check';
import { FlagError, MANAGER_FLAGS, parseFlags } from '../manager/flags.js';
import { DurationError, formatDuration, goDuration, MAX_DURATION_MS, parseDuration } from './duration.js';

// Durations are written by tenants (a Certificate's duration and renewBefore) and by operators
// (flags); flags come from a chart's values. A value or a typed error, for any text.

const unit = fc.constantFrom('ns', 'us', 'µs', 'ms', 's', 'm', 'h');
const goDurationText = fc
  .array(fc.tuple(fc.oneof(fc.nat({ max: 100_000 }).map(String), fc.stringMatching(/^[0-9]{1,25}(\.[0-9]{1,6})?$/)), unit), { minLength: 1, maxLength: 4 })
  .map((ps) => ps.map(([n, u]) => `${n}${u}`).join(''));
const flagNames = Object.keys(MANAGER_FLAGS).map((k) => k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`));
const arg = fc.oneof(
  fc.tuple(fc.constantFrom(...flagNames, 'help', 'nope'), fc.option(fc.string({ maxLength: 20 }))).map(([n, v]) => (v === null ? `--${n}` : `--${n}=${v}`)),
  fc.string({ maxLength: 20 }),
);

export const targets = fuzzTargets(
  {
    name: "parseDuration: milliseconds within Go's range, or a DurationError, for any text",
    arbitrary: fc.oneof(goDurationText, fc.string({ maxLength: 30 })),
    run: (s: string) => {
      const ms = parseDuration(s);
      if (!(ms >= 0 && ms <= MAX_DURATION_MS)) throw new Error(`${s} parsed to ${ms}`);
    },
    expected: refusesWith(DurationError),
  },
  {
    name: 'formatDuration then parseDuration: the same whole seconds',
    arbitrary: fc.nat({ max: 2_000_000 }).map((s) => s * 1000),
    run: (ms: number) => {
      const back = parseDuration(formatDuration(ms));
      if (back !== ms) throw new Error(`${ms} ms printed as ${formatDuration(ms)}, read back as ${back}`);
    },
  },
  {
    name: "goDuration then parseDuration: the same milliseconds, up to Go's longest",
    arbitrary: fc.integer({ min: 0, max: MAX_DURATION_MS }),
    run: (ms: number) => {
      const back = parseDuration(goDuration(ms));
      if (back !== ms) throw new Error(`${ms} ms written ${goDuration(ms)}, read back as ${back}`);
    },
  },
  {
    name: 'parseFlags: the values or a FlagError, for any command line',
    arbitrary: fc.array(arg, { maxLength: 6 }),
    run: (argv: string[]) => parseFlags(MANAGER_FLAGS, argv),
    expected: refusesWith(FlagError),
  },
);
