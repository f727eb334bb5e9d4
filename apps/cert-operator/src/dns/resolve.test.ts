import { createSocket } from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { DnsError } from './client.js';
import { CLASS, decodeMessage, encodeMessage, encodeName, TYPE, type ResourceRecord } from './message.js';
import { authoritativeServers, MAX_NAMESERVERS } from './resolve.js';

const closers: (() => void)[] = [];
afterEach(() => closers.splice(0).forEach((c) => c()));

/**
 * The DNS-01 self-check asks a zone's own nameservers, and a tenant controls what its zone's NS
 * records say. A zone that names hundreds of nameservers, none of which resolves, must not hold a
 * worker (shared by every namespace) for one timeout per name.
 */
describe('authoritativeServers against a zone that names hundreds of nameservers', () => {
  it('asks a bounded number of them, at once, and gives up within about one timeout', async () => {
    const aQueries: string[] = [];
    const sock = createSocket('udp4');
    sock.on('message', (msg, from) => {
      const q = decodeMessage(msg);
      const question = q.questions[0]!;
      if (question.type === TYPE.A) return void aQueries.push(question.name); // never answered
      const answers: ResourceRecord[] = Array.from({ length: 500 }, (_, i) => ({
        name: question.name,
        type: TYPE.NS,
        class: CLASS.IN,
        ttl: 60,
        data: encodeName(`ns${i}.tenant.test`),
      }));
      sock.send(encodeMessage({ id: q.id, flags: 0x8180, questions: q.questions, answers, authorities: [], additionals: [] }), from.port, from.address);
    });
    await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
    closers.push(() => sock.close());

    const t0 = performance.now();
    const err = await authoritativeServers('tenant.test', [`127.0.0.1:${sock.address().port}`]).catch((e: unknown) => e);
    const ms = performance.now() - t0;
    expect(err).toBeInstanceOf(DnsError);
    expect(new Set(aQueries).size).toBe(MAX_NAMESERVERS);
    // One query timeout (5 s) for all of them, not 500 in a row (42 minutes).
    expect(ms).toBeLessThan(7_000);
  }, 20_000);
});
