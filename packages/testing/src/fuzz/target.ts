import type { Arbitrary } from 'fast-check';

/**
 * One decoder of outside bytes under fuzzing: what to feed it, and how to call it. `run` returns
 * (a result) or throws one of the errors `expected` accepts (a typed refusal of bad input); any
 * other throw, a hang past the harness's time limit, or a blown memory limit is a finding.
 */
export interface FuzzTarget<T = unknown> {
  name: string;
  arbitrary: Arbitrary<T>;
  run(input: T): unknown | Promise<unknown>;
  /** Whether an error is a typed refusal the decoder promises (default: none is). */
  expected?(err: unknown): boolean;
}

/** The targets of a `*.fuzz.ts` module (its named export `targets`), typed. */
export const fuzzTargets = <const T extends FuzzTarget<any>[]>(...targets: T): T => targets;

/** An `expected` for decoders that refuse bad input with instances of these classes. */
export const refusesWith =
  (...classes: (abstract new (...args: any[]) => Error)[]) =>
  (err: unknown): boolean =>
    classes.some((c) => err instanceof c);
