import type { Logger } from 'pino';
import { parseResourcePath } from './kind.js';

/**
 * The API server's `Warning` headers (RFC 7234 §5.5, as Kubernetes sends them since 1.19:
 * `299 - "text"`): a deprecated API version, a field it ignored, a policy in warn mode. Bytes from
 * outside: read without trusting them. Entries are split on commas outside quotes, only code 299
 * is kept, a malformed entry ends the parse of its header (what came before it is kept), and at
 * most MAX_WARNINGS texts of at most MAX_WARNING_CHARS each come out.
 */
export const MAX_WARNINGS = 16;
export const MAX_WARNING_CHARS = 512;

export function parseWarnings(header: string | string[] | undefined): string[] {
  const out: string[] = [];
  for (const value of Array.isArray(header) ? header : header === undefined ? [] : [header]) {
    let i = 0;
    while (i < value.length && out.length < MAX_WARNINGS) {
      // warn-code SP warn-agent SP
      const head = /^[\s,]*(\d{3}) +[^\s"]+ +"/.exec(value.slice(i, i + 300));
      if (!head) break;
      const code = head[1];
      i += head[0].length;
      let text = '';
      let closed = false;
      for (; i < value.length; i++) {
        const c = value[i]!;
        if (c === '\\' && i + 1 < value.length) text += value[++i];
        else if (c === '"') {
          closed = true;
          i++;
          break;
        } else text += c;
      }
      if (!closed) break;
      // An optional quoted warn-date.
      const date = /^ +"[^"]*"/.exec(value.slice(i, i + 100));
      if (date) i += date[0].length;
      if (code === '299' && text) out.push(text.length > MAX_WARNING_CHARS ? `${text.slice(0, MAX_WARNING_CHARS)}…` : text);
    }
  }
  return out;
}

/**
 * What a request path is about, for one warning per resource: `deployments.apps`, `pods`,
 * `widgets.example.com`. Paths outside the resource API (`/version`) name themselves.
 */
export function resourceOfPath(path: string): string {
  const target = parseResourcePath(path);
  if (!target) return path;
  return target.group ? `${target.resource}.${target.group}` : target.resource;
}

/**
 * Logs each (resource, warning) once per process, as client-go's deduplicating warning writer
 * does: a deprecated version would otherwise log on every request of every reconcile. The set is
 * bounded (a server that puts a request id in its warnings cannot grow it without end); past the
 * bound it starts over, so a warning may log again, never endlessly often.
 */
export class WarningLog {
  static readonly MAX_REMEMBERED = 1_000;
  private readonly seen = new Set<string>();

  constructor(private readonly log: Pick<Logger, 'warn'>) {}

  note(resource: string, warnings: string[]): void {
    for (const warning of warnings) {
      const key = `${resource}\u0000${warning}`;
      if (this.seen.has(key)) continue;
      if (this.seen.size >= WarningLog.MAX_REMEMBERED) this.seen.clear();
      this.seen.add(key);
      this.log.warn({ resource, warning }, 'the API server warned');
    }
  }
}
