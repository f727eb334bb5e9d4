/**
 * Go durations (`2160h`, `1h30m`, `500ms`), as Kubernetes APIs and kubebuilder flags write them:
 * the one parser for CRD fields (cert-manager's `duration`) and duration flags alike.
 */
const UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Go's longest duration (int64 nanoseconds, about 292 years), in milliseconds. */
export const MAX_DURATION_MS = 9_223_372_036_854;

/** Text that is not a Go duration, or one longer than Go can hold. */
export class DurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DurationError';
  }
}

/** A Go duration string (`2160h`, `1h30m`, `90s`) in milliseconds, as metav1.Duration parses it. */
export function parseDuration(s: string): number {
  const re = /([0-9]+(?:\.[0-9]+)?)(ns|us|µs|ms|s|m|h)/g;
  let total = 0;
  let consumed = 0;
  for (const m of s.matchAll(re)) {
    total += Number(m[1]) * UNITS[m[2]!]!;
    consumed += m[0].length;
  }
  if (!s || consumed !== s.length)
    throw new DurationError(`invalid duration "${s.length > 64 ? `${s.slice(0, 64)}…` : s}": use Go's format, e.g. 2160h or 1h30m`);
  // Go refuses these (time: invalid duration), and a date that far off is not a date JavaScript can write.
  if (!(total <= MAX_DURATION_MS)) throw new DurationError(`duration "${s.length > 64 ? `${s.slice(0, 64)}…` : s}" is longer than Go's longest (2562047h)`);
  return total;
}

/** Milliseconds as a short Go duration (`2160h0m0s` → `2160h`), for messages. */
export function formatDuration(ms: number): string {
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.round((ms % 60_000) / 1000);
  return [h ? `${h}h` : '', m ? `${m}m` : '', s || (!h && !m) ? `${s}s` : ''].join('');
}

const trimmed = (n: number) => String(Number(n.toFixed(9)));

/**
 * Milliseconds as Go's `time.Duration.String()` writes them (`2160h0m0s`, `1m30s`, `500ms`): the
 * form a Go client's round trip of a metav1.Duration gives back. Objects whose specs are compared
 * whole (an immutable CertificateRequest's) are written in it, so a Go client's update of their
 * metadata leaves the spec byte for byte as it was.
 */
export function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 0) return `-${goDuration(-ms)}`;
  if (ms < 0.001) return `${trimmed(ms * 1e6)}ns`;
  if (ms < 1) return `${trimmed(ms * 1e3)}µs`;
  if (ms < 1000) return `${trimmed(ms)}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = `${trimmed((ms % 60_000) / 1000)}s`;
  return h ? `${h}h${m}m${s}` : m ? `${m}m${s}` : s;
}
