import { X509Certificate } from 'node:crypto';
import { Agent, request } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../log/logger.js';
import { issueCa, issueServing } from './self-signed.js';
import { WebhookServer } from './server.js';

const now = Date.now();
const caA = issueCa('ca a', now - 60_000, now + 86_400_000);
const caB = issueCa('ca b', now - 60_000, now + 86_400_000);
const leafA = issueServing(caA, ['127.0.0.1'], now - 60_000, now + 86_400_000);
const leafB = issueServing(caB, ['127.0.0.1'], now - 60_000, now + 86_400_000);

const stops: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const s of stops.splice(0)) await s();
});

/** One POST through a kept-alive agent: the answer, its Connection header, the socket it used. */
function call(agent: Agent, port: number): Promise<{ status: number; connection?: string; socket: TLSSocket; issuer: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/x', method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      // Read now: the socket goes back to the agent once the answer ends.
      const socket = res.socket as TLSSocket;
      const issuer = new X509Certificate(socket.getPeerCertificate().raw).issuer;
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, socket, issuer }));
    });
    req.on('error', reject);
    req.end('{}');
  });
}

describe('the webhook server taking a new certificate', () => {
  // Reproduced in a fresh-clone run: closing idle connections at a rotation raced the API server's
  // next call on one (read: connection reset by peer), and Go does not retry a POST.
  it('keeps idle connections open; each answers one more call with Connection: close, then clients reconnect to the new certificate', async () => {
    const server = new WebhookServer({ host: '127.0.0.1', port: 0 }, silentLogger());
    server.route('/x', () => ({ ok: true }));
    server.setCertificate(leafA);
    await server.start();
    stops.push(() => server.stop());
    const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: [caA.cert, caB.cert] });
    stops.push(() => agent.destroy());

    const first = await call(agent, server.port!);
    expect([first.status, first.connection, first.issuer]).toEqual([200, 'keep-alive', 'CN=ca a']);
    expect(server.calls).toBe(1);

    server.setCertificate(leafB);
    await new Promise((r) => setTimeout(r, 200));
    // Still open: nothing the client might be sending on it is cut.
    expect(first.socket.destroyed).toBe(false);

    const second = await call(agent, server.port!);
    expect(second.socket).toBe(first.socket);
    expect([second.status, second.connection]).toEqual([200, 'close']);

    const third = await call(agent, server.port!);
    expect(third.socket).not.toBe(first.socket);
    expect([third.status, third.connection, third.issuer]).toEqual([200, 'keep-alive', 'CN=ca b']);
  });
});
