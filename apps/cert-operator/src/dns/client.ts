import { randomInt } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { CLASS, decodeMessage, encodeMessage, isTruncated, OPCODE, rcodeOf, RCODE_NAMES, TYPE, type Message, type ResourceRecord } from './message.js';
import { signRequest, verifyResponse, type TsigKey } from './tsig.js';
import { DnsError } from './errors.js';

/** host:port (port 53 when left out; IPv6 in brackets). */
export function parseServer(server: string): { host: string; port: number } {
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(server) ?? /^([^:]+)(?::(\d+))?$/.exec(server);
  if (!m) throw new Error(`"${server}" is not a DNS server address (host or host:port)`);
  return { host: m[1]!, port: m[2] ? Number(m[2]) : 53 };
}

export { DnsError, DnsFormatError } from './errors.js';

/**
 * One UDP exchange. The socket is connected, so the kernel drops datagrams from any other address
 * or port (an off-path spoofer's), and a datagram with another id (a stale answer, a guess) is
 * skipped: the exchange waits for its own answer until the timeout.
 */
function udp(server: { host: string; port: number }, wire: Buffer, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const sock = createSocket(server.host.includes(':') ? 'udp6' : 'udp4');
    const done = (err: Error | undefined, msg?: Buffer) => {
      clearTimeout(timer);
      sock.close();
      if (err) reject(err);
      else resolve(msg!);
    };
    const timer = setTimeout(() => done(new DnsError(`no answer from ${server.host}:${server.port} within ${timeoutMs} ms`)), timeoutMs);
    sock.on('message', (msg) => {
      if (msg.length >= 2 && msg.readUInt16BE(0) === wire.readUInt16BE(0)) done(undefined, msg);
    });
    sock.on('error', (err) => done(new DnsError(`${server.host}:${server.port}: ${err.message}`)));
    sock.connect(server.port, server.host, () => sock.send(wire));
  });
}

/**
 * One TCP exchange, bounded as a whole: a server that drips its answer a byte at a time is cut off
 * at the timeout like one that sends nothing (an idle timeout alone would wait for ever).
 */
function tcp(server: { host: string; port: number }, wire: Buffer, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: server.host, port: server.port });
    let got = Buffer.alloc(0);
    let settled = false;
    const done = (err: Error | undefined, msg?: Buffer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.destroy();
      if (err) reject(err);
      else resolve(msg!);
    };
    const timer = setTimeout(() => done(new DnsError(`no answer from ${server.host}:${server.port} within ${timeoutMs} ms (TCP)`)), timeoutMs);
    sock.on('connect', () => {
      const len = Buffer.alloc(2);
      len.writeUInt16BE(wire.length);
      sock.write(Buffer.concat([len, wire]));
    });
    sock.on('data', (d) => {
      got = Buffer.concat([got, d]);
      if (got.length >= 2 && got.length >= 2 + got.readUInt16BE(0)) done(undefined, got.subarray(2, 2 + got.readUInt16BE(0)));
    });
    sock.on('error', (err) => done(new DnsError(`${server.host}:${server.port}: ${err.message}`)));
    sock.on('close', () => done(new DnsError(`${server.host}:${server.port} closed the connection without an answer`)));
  });
}

/**
 * Sends a message and returns the answer: UDP, and TCP when the answer is truncated (or for
 * updates, which BIND and others take over either). Signed with TSIG when a key is given, and the
 * answer's signature checked.
 */
export async function exchange(server: string, m: Message, opts: { tsig?: TsigKey; timeoutMs?: number; tcp?: boolean } = {}): Promise<Message> {
  const addr = parseServer(server);
  const timeoutMs = opts.timeoutMs ?? 5_000;
  let wire = encodeMessage(m);
  let mac: Buffer | undefined;
  if (opts.tsig) {
    const signed = signRequest(wire, m, opts.tsig);
    mac = signed.mac;
    wire = encodeMessage({ ...m, additionals: [...m.additionals, signed.record] });
  }
  let raw = opts.tcp ? await tcp(addr, wire, timeoutMs) : await udp(addr, wire, timeoutMs);
  let res = decodeMessage(raw);
  if (!opts.tcp && isTruncated(res)) {
    raw = await tcp(addr, wire, timeoutMs);
    res = decodeMessage(raw);
  }
  if (res.id !== m.id) throw new DnsError(`${server} answered another message (id ${res.id}, sent ${m.id})`);
  if (opts.tsig && mac) {
    const bad = verifyResponse(raw, res, opts.tsig, mac);
    // An answer refused before its key was checked (NOTAUTH, REFUSED) comes unsigned: its rcode says why.
    if (bad && rcodeOf(res) === 0) throw new DnsError(`${server}: ${bad}`);
  }
  return res;
}

const newId = () => randomInt(0, 0xffff);

/** A recursive (or authoritative) query; the answer's records, or a DnsError naming the rcode. */
export async function query(server: string, name: string, type: number, opts: { timeoutMs?: number } = {}): Promise<Message> {
  // RD set: a recursive resolver resolves; an authoritative server ignores it.
  const res = await exchange(
    server,
    { id: newId(), flags: 0x0100, questions: [{ name, type, class: CLASS.IN }], answers: [], authorities: [], additionals: [] },
    opts,
  );
  const rcode = rcodeOf(res);
  if (rcode !== 0 && rcode !== 3) throw new DnsError(`${server} answered ${RCODE_NAMES[rcode] ?? rcode} for ${name} ${type}`, RCODE_NAMES[rcode]);
  return res;
}

/** An RFC 2136 update of one zone: records to add and records to delete (by name, type and value). */
export async function update(
  server: string,
  zone: string,
  changes: { add?: ResourceRecord[]; remove?: ResourceRecord[] },
  tsig?: TsigKey,
  opts: { timeoutMs?: number } = {},
): Promise<void> {
  const updates: ResourceRecord[] = [
    ...(changes.add ?? []),
    // Delete an RR from an RRset (RFC 2136 §2.5.4): class NONE, TTL 0, the RDATA to remove.
    ...(changes.remove ?? []).map((r) => ({ ...r, class: CLASS.NONE, ttl: 0 })),
  ];
  const res = await exchange(
    server,
    {
      id: newId(),
      flags: OPCODE.UPDATE << 11,
      questions: [{ name: zone, type: TYPE.SOA, class: CLASS.IN }],
      answers: [],
      authorities: updates,
      additionals: [],
    },
    { tsig, tcp: true, timeoutMs: opts.timeoutMs },
  );
  const rcode = rcodeOf(res);
  if (rcode !== 0)
    throw new DnsError(
      `${server} refused the update of zone ${zone}: ${RCODE_NAMES[rcode] ?? rcode}${rcode === 9 ? ' (the TSIG key is not accepted for this zone)' : rcode === 5 ? ' (updates are not allowed for this key or address)' : ''}`,
      RCODE_NAMES[rcode],
    );
}
