import { assertNoFindings, runFuzzTarget } from '@opkit/testing';
import { describe, it } from 'vitest';
import { targets } from './dns.fuzz.js';

describe('fuzzing what DNS servers send', () => {
  for (const t of targets) {
    it(t.name, async () => assertNoFindings(await runFuzzTarget(new URL('./dns.fuzz.ts', import.meta.url), t.name, { runs: 500, timeLimitMs: 8_000 })), 60_000);
  }
});
