import { fuzzTargets } from '@opkit/testing/fuzz';
import fc from 'fast-check';
import { formatAssignment, isAssignment, normalize, parseAssignment, plan, ring } from './assignment.js';
import { formatRanges, parseRanges, rangeSet } from './ranges.js';

// The ring Lease's assignment and a replica's ranges are annotations: anyone who may update Leases
// in the operator's namespace can write them. Read as a well-formed value or as undefined (never a
// throw, never a half-valid assignment), for any text; and what we write reads back the same.

const hex = fc.bigInt({ min: 0n, max: 1n << 64n }).map((n) => n.toString(16));
const name = fc.constantFrom('', 'r0', 'r1', 'memcached-operator-7d9f', 'x'.repeat(300));
const rows = fc.array(fc.tuple(hex, hex, name, name), { maxLength: 8 }).map((rs) => JSON.stringify(rs));
const rangesText = fc.array(fc.tuple(hex, hex), { maxLength: 6 }).map((rs) => rs.map(([a, b]) => `${a}-${b}`).join(','));
const members = fc.uniqueArray(fc.constantFrom('r0', 'r1', 'r2', 'r3', 'r4'), { maxLength: 5 });

export const targets = fuzzTargets(
  {
    name: 'parseAssignment: a covering, sorted assignment or undefined, for any text',
    arbitrary: fc.oneof(rows, fc.string({ maxLength: 200 }), fc.json({ maxDepth: 3 })),
    run: (text: string) => {
      const a = parseAssignment(text);
      if (a !== undefined && (!isAssignment(a) || formatAssignment(normalize(a)) !== formatAssignment(a)))
        throw new Error(`${text} read as a malformed assignment`);
    },
  },
  {
    name: 'formatAssignment then parseAssignment: the same assignment',
    arbitrary: fc.tuple(members, members),
    run: ([before, after]: [string[], string[]]) => {
      const a = plan(ring(before, 16), ring(after, 16), new Set(after.slice(1)));
      const back = parseAssignment(formatAssignment(a));
      if (!back || formatAssignment(back) !== formatAssignment(a)) throw new Error(`${formatAssignment(a)} read back as ${back && formatAssignment(back)}`);
    },
  },
  {
    name: 'parseRanges: normal-form ranges within the hash space or undefined, for any text',
    arbitrary: fc.oneof(rangesText, fc.string({ maxLength: 100 })),
    run: (text: string) => {
      const r = parseRanges(text);
      if (r !== undefined && formatRanges(rangeSet(r)) !== formatRanges(r)) throw new Error(`${text} read as ranges not in normal form`);
    },
  },
);
