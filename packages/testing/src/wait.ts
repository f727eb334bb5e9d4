/** Thrown from a check to stop waiting at once: the awaited state can no longer come. */
export class StopWaiting extends Error {
  override name = 'StopWaiting';
}

export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  signal?: AbortSignal;
}

/**
 * Polls `check` until it returns a value other than undefined/false, and returns it.
 * On timeout the error names what was awaited and the last error or value seen, so a failing
 * test says why instead of just "timeout".
 */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false | null> | T | undefined | false | null,
  { timeoutMs = 30_000, intervalMs = 100, signal }: WaitOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    signal?.throwIfAborted();
    try {
      const value = await check();
      if (value !== undefined && value !== false && value !== null) return value as T;
      last = value;
    } catch (err) {
      if (err instanceof StopWaiting) throw err;
      last = err;
    }
    if (Date.now() >= deadline) {
      const detail = last instanceof Error ? last.message : last === undefined ? '' : JSON.stringify(last);
      throw new Error(`timed out after ${Math.round(timeoutMs / 1000)}s waiting for ${what}${detail ? `; last seen: ${detail}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * Polls `read` until its value (compared as JSON) has not changed for `quietMs`, and returns it:
 * "settled", for controllers whose last write may trail the state a test waits for.
 */
export async function waitForQuiet<T>(
  what: string,
  read: () => T | Promise<T>,
  { quietMs, timeoutMs = 120_000, intervalMs = 500 }: WaitOptions & { quietMs: number },
): Promise<T> {
  let last = JSON.stringify(await read());
  let quietSince = Date.now();
  await waitFor(
    what,
    async () => {
      const now = JSON.stringify(await read());
      if (now !== last) [last, quietSince] = [now, Date.now()];
      return Date.now() - quietSince >= quietMs;
    },
    { timeoutMs, intervalMs },
  );
  return read();
}
