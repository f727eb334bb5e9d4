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

/**
 * The apiserver's own record of every request (level Metadata, blocking mode), so tests can count
 * what an operator really sent: no client-side counting to trust.
 */
export class AuditLog {
  private offset = 0;
  private partial = '';
  private readonly events: AuditEvent[] = [];

  constructor(readonly path: string) {}

  private read(): void {
    if (!existsSync(this.path)) return;
    const size = statSync(this.path).size;
    if (size <= this.offset) return;
    const fd = openSync(this.path, 'r');
    try {
      const buf = Buffer.alloc(size - this.offset);
      readSync(fd, buf, 0, buf.length, this.offset);
      this.offset = size;
      const text = this.partial + buf.toString('utf8');
      const lines = text.split('\n');
      this.partial = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) this.events.push(JSON.parse(line) as AuditEvent);
    } finally {
      closeSync(fd);
    }
  }

  /** Completed requests (ResponseComplete stage) matching the filter. */
  query(filter: AuditFilter = {}): AuditEvent[] {
    this.read();
    const since = filter.since?.getTime();
    return this.events.filter((e) => {
      if (e.stage !== 'ResponseComplete') return false;
      if (filter.user) {
        const who = e.impersonatedUser?.username ?? e.user.username;
        if (who !== filter.user) return false;
      }
      if (since !== undefined && Date.parse(e.requestReceivedTimestamp) < since) return false;
      if (filter.resource && e.objectRef?.resource !== filter.resource) return false;
      if (filter.verbs && !filter.verbs.includes(e.verb)) return false;
      return true;
    });
  }

  /** Write requests (create, update, patch, delete) matching the filter. */
  writes(filter: Omit<AuditFilter, 'verbs'> = {}): AuditEvent[] {
    return this.query({ ...filter, verbs: WRITE_VERBS });
  }
}
