import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';

/** The fields of an audit.k8s.io/v1 Event that tests reason about. */
export interface AuditEvent {
  auditID: string;
  stage: string;
  verb: string;
  requestURI: string;
  userAgent?: string;
  user: { username: string; groups?: string[] };
  impersonatedUser?: { username: string; groups?: string[] };
  objectRef?: { resource?: string; namespace?: string; name?: string; subresource?: string; apiGroup?: string; apiVersion?: string };
  responseStatus?: { code?: number; message?: string };
  /** At level RequestResponse (Lease writes): what was written, as stored. */
  responseObject?: { metadata?: { name?: string; resourceVersion?: string; annotations?: Record<string, string> } };
  requestReceivedTimestamp: string;
  stageTimestamp: string;
}

export interface AuditFilter {
  /** Matches the authenticated user, or the impersonated one when impersonation was used. */
  user?: string;
  /** Only events received at or after this time. */
  since?: Date;
  resource?: string;
  verbs?: string[];
}

export const WRITE_VERBS = ['create', 'update', 'patch', 'delete', 'deletecollection'];

/** How much of the log is read at once: a whole long run's log is more than one string can hold. */
const CHUNK_BYTES = 32 * 2 ** 20;

/**
 * The complete lines of `path` from byte `from` on, read a chunk at a time, each with the byte
 * offset just past it (where the next read starts). A line still being written is not given.
 */
export function* linesOf(path: string, from: number, chunkBytes = CHUNK_BYTES): Generator<{ text: string; end: number }> {
  if (!existsSync(path)) return;
  const size = statSync(path).size;
  const fd = openSync(path, 'r');
  let offset = from;
  let partial = Buffer.alloc(0);
  try {
    while (offset < size) {
      const buf = Buffer.alloc(Math.min(chunkBytes, size - offset));
      const n = readSync(fd, buf, 0, buf.length, offset);
      if (n <= 0) break;
      const data = Buffer.concat([partial, buf.subarray(0, n)]);
      const base = offset - partial.length;
      offset += n;
      let start = 0;
      for (let nl = data.indexOf(0x0a); nl >= 0; start = nl + 1, nl = data.indexOf(0x0a, start)) {
        const text = data.toString('utf8', start, nl);
        if (text.trim()) yield { text, end: base + nl + 1 };
      }
      partial = data.subarray(start);
    }
  } finally {
    closeSync(fd);
  }
}

const matches = (e: AuditEvent, filter: AuditFilter, since: number | undefined): boolean => {
  if (e.stage !== 'ResponseComplete') return false;
  if (filter.user) {
    const who = e.impersonatedUser?.username ?? e.user.username;
    if (who !== filter.user) return false;
  }
  if (since !== undefined && Date.parse(e.requestReceivedTimestamp) < since) return false;
  if (filter.resource && e.objectRef?.resource !== filter.resource) return false;
  if (filter.verbs && !filter.verbs.includes(e.verb)) return false;
  return true;
};

/**
 * The apiserver's own record of every request (level Metadata, blocking mode), so tests can count
 * what an operator really sent: no client-side counting to trust.
 */
export class AuditLog {
  private offset = 0;
  private readonly events: AuditEvent[] = [];
  /** Where `scanWrites` goes on from. */
  private scanned = 0;

  constructor(readonly path: string) {}

  private read(): void {
    for (const { text, end } of linesOf(this.path, this.offset)) {
      this.events.push(JSON.parse(text) as AuditEvent);
      this.offset = end;
    }
  }

  /** Completed requests (ResponseComplete stage) matching the filter. */
  query(filter: AuditFilter = {}): AuditEvent[] {
    this.read();
    const since = filter.since?.getTime();
    return this.events.filter((e) => matches(e, filter, since));
  }

  /** Write requests (create, update, patch, delete) matching the filter. */
  writes(filter: Omit<AuditFilter, 'verbs'> = {}): AuditEvent[] {
    return this.query({ ...filter, verbs: WRITE_VERBS });
  }

  /**
   * Every write matching the filter that was logged since the previous call (the first call: since
   * the log began), read through once and kept nowhere: for a bench whose log outgrows memory (a
   * gigabyte an hour at 200 requests a second). Called every minute, each call reads a minute's
   * lines, so a long run counts as it goes and never stops its event loop for a whole log.
   */
  scanWrites(filter: Omit<AuditFilter, 'verbs'>, visit: (e: AuditEvent) => void): void {
    const since = filter.since?.getTime();
    const f = { ...filter, verbs: WRITE_VERBS };
    for (const { text, end } of linesOf(this.path, this.scanned)) {
      this.scanned = end;
      // Cheap before parsing: only write verbs are wanted.
      if (!/"verb":"(create|update|patch|delete|deletecollection)"/.test(text)) continue;
      const e = JSON.parse(text) as AuditEvent;
      if (matches(e, f, since)) visit(e);
    }
  }
}
