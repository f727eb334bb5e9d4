// What a `*.fuzz.ts` module needs: light on purpose, since it is bundled into the fuzzing worker.
export { fuzzTargets, refusesWith, type FuzzTarget } from './target.js';
