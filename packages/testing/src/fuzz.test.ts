/// <reference types="vite/client" />
import { describe, it } from 'vitest';
import { assertNoFindings, runFuzzTarget } from './fuzz/run.js';
import type { FuzzTarget } from './fuzz/target.js';

// Every *.fuzz.ts of this package, each target with a short budget here; the long one is
// `node bench/run.mjs fuzz`. A finding prints the seed and the command that replays it.
const modules = import.meta.glob<{ targets: FuzzTarget[] }>('./**/*.fuzz.ts', { eager: true });

for (const [file, { targets }] of Object.entries(modules)) {
  describe(`fuzzing ${file}`, () => {
    for (const t of targets)
      it(t.name, async () => assertNoFindings(await runFuzzTarget(new URL(file, import.meta.url), t.name, { runs: 300, timeLimitMs: 6_000 })), 60_000);
  });
}
