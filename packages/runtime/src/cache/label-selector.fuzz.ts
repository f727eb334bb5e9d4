import { fuzzTargets, refusesWith } from '@opkit/testing/fuzz';
import fc from 'fast-check';
import { parseSelector, SelectorError } from './label-selector.js';

// Label selectors come from configuration (a chart value, a flag) and from objects (a solver's
// selector): a matcher or a SelectorError, for any text, and the matcher agrees with itself.

const key = fc.stringMatching(/^[a-z0-9]([a-z0-9./-]{0,15}[a-z0-9])?$/);
const value = fc.stringMatching(/^[a-zA-Z0-9._-]{0,12}$/);
const term = fc.oneof(
  fc.tuple(key, fc.constantFrom('=', '==', '!='), value).map(([k, op, v]) => `${k}${op}${v}`),
  fc.tuple(key, fc.constantFrom('in', 'notin'), fc.array(value, { maxLength: 4 })).map(([k, op, vs]) => `${k} ${op} (${vs.join(',')})`),
  key,
  key.map((k) => `!${k}`),
);
const selector = fc.oneof(
  fc.array(term, { maxLength: 5 }).map((ts) => ts.join(',')),
  fc.string({ maxLength: 80 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
);
const labels = fc.dictionary(key, value, { maxKeys: 5 });

export const targets = fuzzTargets({
  name: 'parseSelector: a matcher or a SelectorError, for any text; the matcher returns a boolean',
  arbitrary: fc.tuple(selector, labels),
  run: ([s, l]: [string, Record<string, string>]) => {
    const matches = parseSelector(s).matches(l);
    if (typeof matches !== 'boolean') throw new Error(`the matcher returned ${String(matches)}`);
  },
  expected: refusesWith(SelectorError),
});
