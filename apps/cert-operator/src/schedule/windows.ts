import { parseDuration } from '@opkit/runtime';
import { CronError, nextFire, parseCron, type Cron } from './cron.js';

/** One renewal window as written (cert-manager v1.21's `renewal.windows[]`): opens at each cron time, for windowDuration. */
export interface WindowSpec {
  cron: string;
  timezone?: string;
  windowDuration: string;
}

export interface Window {
  cron: Cron;
  timeZone: string;
  durationMs: number;
}

/** Parsed windows by their spec: every reconcile of every Certificate reads them. Bounded. */
const parsed = new Map<string, Window[] | CronError>();
const MAX_PARSED = 1_000;

/** The windows, parsed (and remembered); the first that cannot be is refused with CronError naming it. */
export function parseWindows(specs: readonly WindowSpec[]): Window[] {
  const key = JSON.stringify(specs);
  let got = parsed.get(key);
  if (!got) {
    try {
      got = parseEach(specs);
    } catch (err) {
      if (!(err instanceof CronError)) throw err;
      got = err;
    }
    if (parsed.size >= MAX_PARSED) parsed.delete(parsed.keys().next().value!);
    parsed.set(key, got);
  }
  if (got instanceof CronError) throw got;
  return got;
}

function parseEach(specs: readonly WindowSpec[]): Window[] {
  return specs.map((w, i) => {
    const where = `renewal.windows[${i}]`;
    let durationMs: number;
    try {
      durationMs = parseDuration(w.windowDuration);
    } catch {
      throw new CronError(`${where}.windowDuration "${w.windowDuration}" is not a duration`);
    }
    if (!(durationMs >= 60_000)) throw new CronError(`${where}.windowDuration must be at least a minute`);
    let window: Window;
    try {
      const timeZone = w.timezone || 'UTC';
      window = { cron: parseCron(w.cron), timeZone, durationMs };
      // An unknown zone is refused here, not at the first renewal; so is a schedule that never
      // fires (30 February), from any start: five years hold every calendar day.
      if (nextFire(window.cron, Date.UTC(2026, 0, 1), timeZone) === undefined) throw new CronError('the schedule never fires');
    } catch (err) {
      throw new CronError(`${where}: ${(err as Error).message}`);
    }
    return window;
  });
}

/**
 * The earliest instant at or after `t` at which one of the windows is open: `t` itself inside a
 * window, else the next opening. Undefined when none opens within the cron search bound. A window
 * that opened at `o` is open while `o <= t < o + duration`, so the first opening after
 * `t - duration` is the one to look at.
 */
export function openAt(windows: readonly Window[], t: number): number | undefined {
  let best: number | undefined;
  for (const w of windows) {
    const opens = nextFire(w.cron, t - w.durationMs + 1, w.timeZone);
    if (opens === undefined) continue;
    const at = Math.max(opens, t);
    if (best === undefined || at < best) best = at;
  }
  return best;
}
