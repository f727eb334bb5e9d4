import { withInspectorSession } from '../helpers/inspector-session.js';
import { getHeapSnapshot } from 'node:v8';
import type { Reply, Route } from './http-server.js';

/** Bounds of `/debug/cpu-profile?seconds=`; default 10. */
export const CPU_PROFILE_SECONDS = { min: 1, max: 60, default: 10 } as const;

const text = (status: number, body: string): Reply => ({ status, contentType: 'text/plain; charset=utf-8', body });

/**
 * A heap snapshot and a CPU profile of the running operator, for DevTools (Memory and Performance
 * panels, or `node --cpu-prof`'s viewers): Go operators have `net/http/pprof`, this is Node's kin.
 * - `/debug/heap-snapshot`: a V8 heap snapshot, streamed. It pauses the process while V8 walks the
 *   heap (seconds for a large cache) and costs about the heap's size again in memory meanwhile.
 * - `/debug/cpu-profile?seconds=10`: a sampling CPU profile over that window (1–60 s).
 * One at a time: a second request meanwhile is answered 409.
 *
 * A heap snapshot holds every secret the process holds (private keys, tokens): these routes are
 * served only behind the metrics server's authentication and authorization (`--metrics-secure`),
 * each path its own grant (`nonResourceURLs`), never opened by `--insecure-debug-queue`.
 */
export function profilingRoutes(secure: boolean): Record<string, Route> {
  let busy = false;
  const closed = text(
    403,
    'Forbidden: a heap snapshot or a profile holds the secrets the process holds, so it is served only with --metrics-secure, to callers the API server authorizes for this path\n',
  );
  const conflict = text(409, 'a heap snapshot or CPU profile is being taken; try again when it is done\n');
  const once = async (work: () => Promise<Reply>): Promise<Reply> => {
    if (!secure) return closed;
    if (busy) return conflict;
    busy = true;
    try {
      return await work();
    } finally {
      busy = false;
    }
  };
  return {
    '/debug/heap-snapshot': () => {
      if (!secure) return closed;
      if (busy) return conflict;
      busy = true;
      try {
        const body = getHeapSnapshot();
        // Busy until the stream is written out (or the caller went away), not only until it starts.
        body.once('close', () => (busy = false));
        return { status: 200, contentType: 'application/json', headers: { 'content-disposition': 'attachment; filename="operator.heapsnapshot"' }, body };
      } catch (err) {
        busy = false;
        throw err;
      }
    },
    '/debug/cpu-profile': (url) =>
      once(async () => {
        const asked = Number(url.searchParams.get('seconds') ?? CPU_PROFILE_SECONDS.default);
        if (!Number.isFinite(asked)) return text(400, `seconds must be a number from ${CPU_PROFILE_SECONDS.min} to ${CPU_PROFILE_SECONDS.max}\n`);
        const seconds = Math.min(CPU_PROFILE_SECONDS.max, Math.max(CPU_PROFILE_SECONDS.min, asked));
        return withInspectorSession(async (session) => {
          await session.post('Profiler.enable');
          await session.post('Profiler.start');
          await new Promise((r) => setTimeout(r, seconds * 1000));
          const { profile } = await session.post('Profiler.stop');
          return {
            status: 200,
            contentType: 'application/json',
            headers: { 'content-disposition': 'attachment; filename="operator.cpuprofile"' },
            body: JSON.stringify(profile),
          };
        });
      }),
  };
}
