import { createHash } from 'node:crypto';
import type { Client } from '../client/client.js';
import { SubjectAccessReview, TokenReview } from '../client/kind.js';
import type { Reply } from './http-server.js';
import { systemClock, type Clock } from '../clock/clock.js';

/**
 * Who may read /metrics and /debug/queue, decided by the API server as kube-rbac-proxy and
 * controller-runtime's `WithAuthenticationAndAuthorization` do: the bearer token is checked with a
 * TokenReview, then the user's right to GET the path with a SubjectAccessReview on
 * `nonResourceURLs`. No token: 401. A token without the right: 403.
 *
 * Answers are kept for 10 s (a scrape every 15–30 s costs two API calls, not two per scrape per
 * path), and concurrent checks of one token and path share one pair of reviews. When the API server
 * cannot answer, a reader it allowed within the last 5 minutes keeps reading: metrics matter most
 * during an outage, and a revoked token reads for at most that long, only while the API server is
 * away. Anyone else gets 503 and the reason.
 */
export class MetricsAccess {
  private readonly answers = new Map<string, { at: number; reply?: Reply }>();
  private readonly pending = new Map<string, Promise<Reply | undefined>>();

  constructor(
    private readonly client: Client,
    private readonly clock: Clock = systemClock,
    private readonly ttlMs = 10_000,
    private readonly staleMs = 300_000,
  ) {}

  /** undefined: allowed; otherwise the reply to send. */
  async check(authorization: string | undefined, path: string): Promise<Reply | undefined> {
    const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
    if (!token) return text(401, 'Unauthorized: a bearer token is required (a ServiceAccount token bound to the metrics reader role)');
    const key = `${createHash('sha256').update(token).digest('hex')} ${path}`;
    const known = this.answers.get(key);
    const age = known ? this.clock.monotonic() - known.at : Infinity;
    if (known && age < this.ttlMs) return known.reply;
    let decision = this.pending.get(key);
    if (!decision) {
      decision = this.decide(token, path)
        .then((reply) => {
          if (this.answers.size >= 256) this.answers.delete(this.answers.keys().next().value!);
          this.answers.set(key, { at: this.clock.monotonic(), reply });
          return reply;
        })
        .finally(() => this.pending.delete(key));
      this.pending.set(key, decision);
    }
    try {
      return await decision;
    } catch (err) {
      if (known && !known.reply && age < this.staleMs) return undefined;
      return text(503, `Service Unavailable: cannot check the token: the API server does not answer (${(err as Error).message})`);
    }
  }

  private async decide(token: string, path: string): Promise<Reply | undefined> {
    const review = await this.client.create(TokenReview, { metadata: {}, spec: { token } } as never);
    const status = review.status;
    if (!status?.authenticated || !status.user) return text(401, `Unauthorized: ${status?.error || 'the token is not valid'}`);
    const user = status.user;
    const sar = await this.client.create(SubjectAccessReview, {
      metadata: {},
      spec: { user: user.username, uid: user.uid, groups: user.groups, extra: user.extra, nonResourceAttributes: { path, verb: 'get' } },
    } as never);
    if (sar.status?.allowed) return undefined;
    return text(403, `Forbidden: user "${user.username}" cannot get path "${path}"${sar.status?.reason ? ` (${sar.status.reason})` : ''}`);
  }
}

const text = (status: number, body: string): Reply => ({ status, contentType: 'text/plain; charset=utf-8', body: `${body}\n` });
