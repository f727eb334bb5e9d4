/**
 * Lets the event loop run (timers, I/O, other informers' events, probes) before going on: what a
 * long piece of cache work does between slices, so one large list does not stall the process.
 */
export const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Objects applied to a store and handed to handlers per turn in a full list (about 7 µs each here). */
export const SLICE = 500;

/** Watch lines parsed per turn (about 50 µs each for a 40-field object here: 5 ms a turn). */
export const LINES_PER_TURN = 100;
