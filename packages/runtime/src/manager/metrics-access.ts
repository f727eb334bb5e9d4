import { createHash } from 'node:crypto';
import type { Client } from '../client/client.js';
import { SubjectAccessReview, TokenReview } from '../client/kind.js';
import type { Reply } from './http-server.js';

/**
 * Who may read /metrics and /debug/queue, decided by the API server as kube-rbac-proxy and
 * controller-runtime's `WithAuthenticationAndAuthorization` do: the bearer token is checked with a
 * TokenReview, then the user's right to GET the path with a SubjectAccessReview on
 * `nonResourceURLs`. No token: 401. A token without the right: 403. Answers are kept for 10 s
 * (a scrape every 15–30 s costs two API calls, not two per scrape per path).
 */
export class MetricsAccess {
  private readonly cache = new Map<string, { at: number; reply?: Reply }>();

  constructor(private readonly client: Client, private readonly ttlMs = 10_000, private readonly now = () => Date.now()) {}

  /** undefined: allowed; otherwise the reply to send. */
  async check(authorization: string | undefined, path: string): Promise<Reply | undefined> {
    const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
    if (!token) return text(401, 'Unauthorized: a bearer token is required (a ServiceAccount token bound to the metrics reader role)');
    const key = `${createHash('sha256').update(token).digest('hex')} ${path}`;
    const hit = this.cache.get(key);
    if (hit && this.now() - hit.at < this.ttlMs) return hit.reply;
    const reply = await this.decide(token, path);
    if (this.cache.size >= 256) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, { at: this.now(), reply });
    return reply;
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
