import { createSocket, type Socket } from 'node:dgram';
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DnsError, query, update } from './client.js';
import { CLASS, decodeMessage, encodeMessage, TYPE, type Message } from './message.js';

/**
 * The DNS client against servers a tenant controls: an Issuer's RFC 2136 nameserver is any address
 * a tenant writes. Whatever such a server does, an exchange ends within its timeout (the operator's
 * workers are shared by every namespace) and an answer is taken only from the server asked.
 */

const closers: (() => void)[] = [];
afterEach(() => closers.splice(0).forEach((c) => c()));

const answerTo = (q: Message, id = q.id): Buffer =>
  encodeMessage({
    id,
    flags: 0x8180,
    questions: q.questions,
    answers: [{ name: q.questions[0]!.name, type: TYPE.A, class: CLASS.IN, ttl: 60, data: Buffer.from([10, 0, 0, 1]) }],
    authorities: [],
    additionals: [],
  });

async function udpServer(onQuery: (q: Message, reply: (b: Buffer) => void, from: { address: string; port: number }) => void): Promise<number> {
  const sock: Socket = createSocket('udp4');
  sock.on('message', (msg, from) => onQuery(decodeMessage(msg), (b) => sock.send(b, from.port, from.address), from));
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
  closers.push(() => sock.close());
  return sock.address().port;
}

async function tcpServer(onConnection: (write: (b: Buffer) => void, request: Buffer) => void): Promise<number> {
  const srv: Server = createServer((c) => {
    c.on('error', () => {});
    c.once('data', (d) => onConnection((b) => c.writable && c.write(b), d.subarray(2)));
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const sockets = new Set<import('node:net').Socket>();
  srv.on('connection', (s) => (sockets.add(s), s.on('close', () => sockets.delete(s))));
  closers.push(() => (sockets.forEach((s) => s.destroy()), srv.close()));
  return (srv.address() as import('node:net').AddressInfo).port;
}

const within = async <T>(ms: number, p: Promise<T>): Promise<{ value?: T; error?: unknown; ms: number }> => {
  const t0 = performance.now();
  const out = await Promise.race([
    p.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    ),
    new Promise<{ error: unknown }>((r) => setTimeout(() => r({ error: new Error(`still running after ${ms} ms`) }), ms)),
  ]);
  return { ...out, ms: performance.now() - t0 };
};

describe('the DNS client against a hostile server', () => {
  it('gives up on a TCP server that drips its answer a byte at a time, at the timeout', async () => {
    const port = await tcpServer((write, request) => {
      const q = decodeMessage(request);
      const wire = answerTo(q);
      const framed = Buffer.concat([Buffer.from([wire.length >> 8, wire.length & 0xff]), wire]);
      let i = 0;
      // One byte every 300 ms: never idle long enough for an idle timeout, done only after ~15 s.
      const t = setInterval(() => (i < framed.length ? write(framed.subarray(i, ++i)) : clearInterval(t)), 300);
      closers.push(() => clearInterval(t));
    });
    const r = await within(6_000, update(`127.0.0.1:${port}`, 'example.test.', { add: [] }, undefined, { timeoutMs: 1_000 }));
    expect(r.error).toBeInstanceOf(DnsError);
    expect((r.error as Error).message).toMatch(/within 1000 ms/);
    expect(r.ms).toBeLessThan(2_500);
  });

  it('takes the answer from the server asked, not a datagram from another port', async () => {
    const port = await udpServer((q, reply, from) => {
      // Another socket answers first, with the right id: an off-path spoofer that guessed it.
      const spoofer = createSocket('udp4');
      const forged = answerTo({ ...q, questions: [{ ...q.questions[0]!, name: 'spoofed.test.' }] });
      spoofer.send(forged, from.port, from.address, () => spoofer.close());
      setTimeout(() => reply(answerTo(q)), 100);
    });
    const r = await within(3_000, query(`127.0.0.1:${port}`, 'www.example.test.', TYPE.A, { timeoutMs: 1_000 }));
    expect(r.error).toBeUndefined();
    expect(r.value!.questions[0]!.name).toBe('www.example.test');
  });

  it('waits past an answer with another id (a stale or spoofed one) for its own', async () => {
    const port = await udpServer((q, reply) => {
      reply(answerTo(q, (q.id + 1) & 0xffff));
      setTimeout(() => reply(answerTo(q)), 100);
    });
    const r = await within(3_000, query(`127.0.0.1:${port}`, 'www.example.test.', TYPE.A, { timeoutMs: 1_000 }));
    expect(r.error).toBeUndefined();
    expect(r.value!.answers).toHaveLength(1);
  });

  it('ends at the timeout when only wrong answers come', async () => {
    const port = await udpServer((q, reply) => {
      const t = setInterval(() => reply(answerTo(q, (q.id + 1) & 0xffff)), 50);
      closers.push(() => clearInterval(t));
    });
    const r = await within(3_000, query(`127.0.0.1:${port}`, 'www.example.test.', TYPE.A, { timeoutMs: 800 }));
    expect(r.error).toBeInstanceOf(DnsError);
    expect(r.ms).toBeLessThan(1_500);
  });
});
