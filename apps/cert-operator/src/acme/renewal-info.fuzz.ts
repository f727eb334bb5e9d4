import { fuzzTargets, refusesWith } from '@opkit/testing/fuzz';
import fc from 'fast-check';
import { decodeRenewalInfo, nextCheckDelay, pointInWindow, ARI_POLL, RenewalInfoError } from './renewal-info.js';

// A tenant's Issuer names the ACME server, so its renewal info is outside bytes: whatever it
// answers, the decoder gives a window that starts before it ends, or refuses with its own error;
// and nothing derived from a window it accepted falls outside it, or polls outside ARI_POLL.

const time = fc.oneof(
  fc.date({ min: new Date(-8.64e15), max: new Date(8.64e15), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom('2026-11-27T10:00:00Z', '2026-11-27T10:00:00.123456789+05:30', '2026-11-27t10:00:00z', '+275760-09-13T00:00:00Z', '2026-02-30T00:00:00Z'),
  fc.string({ maxLength: 30 }),
  fc.integer(),
);
const doc = fc.record(
  {
    suggestedWindow: fc.oneof(fc.record({ start: time, end: time }, { requiredKeys: [] }), fc.jsonValue({ maxDepth: 2 })),
    explanationURL: fc.oneof(fc.webUrl(), fc.string({ maxLength: 40 }), fc.jsonValue({ maxDepth: 1 })),
  },
  { requiredKeys: [] },
);
const body = fc.oneof(
  doc,
  doc.map((d) => JSON.stringify(d)),
  fc.jsonValue({ maxDepth: 3 }),
  fc.string({ maxLength: 80 }),
);

export const targets = fuzzTargets({
  name: "a CA's renewal info: a window that starts before it ends, or a RenewalInfoError",
  arbitrary: fc.tuple(body, fc.string({ maxLength: 20 }), fc.option(fc.integer({ min: -1e12, max: 1e15 }), { nil: undefined })),
  run: ([b, seed, retryAfter]: [unknown, string, number | undefined]) => {
    const info = decodeRenewalInfo(b);
    const { start, end } = info.window;
    if (!(start.getTime() < end.getTime())) throw new Error(`accepted a window from ${start.toISOString()} to ${end.toISOString()}`);
    const at = pointInWindow(info.window, seed).getTime();
    if (!(at >= start.getTime() && at < end.getTime())) throw new Error(`renewal at ${at} outside [${start.getTime()}, ${end.getTime()})`);
    const poll = nextCheckDelay(retryAfter, seed);
    if (!(poll >= ARI_POLL.minMs && poll <= ARI_POLL.maxMs)) throw new Error(`polls after ${poll} ms`);
    if (info.explanationURL !== undefined && !/^https?:/i.test(info.explanationURL)) throw new Error(`kept explanation ${info.explanationURL}`);
    return info;
  },
  expected: refusesWith(RenewalInfoError),
});
