import { fuzzTargets } from '@opkit/testing/fuzz';
import fc from 'fast-check';
import { MAX_WARNING_CHARS, MAX_WARNINGS, parseWarnings } from './warnings.js';

// The API server's Warning header (or whatever sits in front of it answers): any bytes give a short
// list of short texts, never a throw.
const piece = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom('299 - "', '299 kube-apiserver "', '199 - "x"', '"', '\\', ', ', ' "Thu, 01 Jan 1970 00:00:00 GMT"'),
);
const header = fc.array(piece, { maxLength: 30 }).map((p) => p.join(''));

export const targets = fuzzTargets({
  name: 'parseWarnings: at most 16 texts of bounded length, for any header',
  arbitrary: fc.oneof(header, fc.array(header, { maxLength: 4 }), fc.constant(`299 - "${'x'.repeat(100_000)}"`)),
  run: (h: string | string[]) => {
    const out = parseWarnings(h);
    if (out.length > MAX_WARNINGS || out.some((w) => w.length > MAX_WARNING_CHARS + 1)) throw new Error(`unbounded: ${out.length}`);
  },
});
