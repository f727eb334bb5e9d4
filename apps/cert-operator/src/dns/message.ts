import { DnsFormatError } from './errors.js';

/**
 * DNS messages (RFC 1035), just what ACME DNS-01 needs: queries and their answers (TXT, SOA, NS,
 * CNAME), and RFC 2136 updates. Names are written uncompressed and read with compression.
 */

export const TYPE = { A: 1, NS: 2, CNAME: 5, SOA: 6, TXT: 16, AAAA: 28, OPT: 41, TSIG: 250, ANY: 255 } as const;
export const CLASS = { IN: 1, NONE: 254, ANY: 255 } as const;
export const OPCODE = { QUERY: 0, UPDATE: 5 } as const;
export const RCODE_NAMES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED', 'YXDOMAIN', 'YXRRSET', 'NXRRSET', 'NOTAUTH', 'NOTZONE'];

export interface Question {
  name: string;
  type: number;
  class: number;
}

export interface ResourceRecord {
  name: string;
  type: number;
  class: number;
  ttl: number;
  /** The RDATA as sent. */
  data: Buffer;
  /** Decoded RDATA for the types read here. */
  value?: string | string[] | { mname: string; rname: string; serial: number };
}

export interface Message {
  id: number;
  flags: number;
  /** Question; for an UPDATE, the zone. */
  questions: Question[];
  /** Answer; for an UPDATE, the prerequisites. */
  answers: ResourceRecord[];
  /** Authority; for an UPDATE, the updates. */
  authorities: ResourceRecord[];
  additionals: ResourceRecord[];
}

export const rcodeOf = (m: Message) => m.flags & 0xf;
export const opcodeOf = (m: Message) => (m.flags >> 11) & 0xf;
export const isTruncated = (m: Message) => (m.flags & 0x0200) !== 0;

/** A name in canonical form: lower case, no trailing dot ("" is the root). */
export const canonical = (name: string) => name.replace(/\.$/, '').toLowerCase();

export function encodeName(name: string): Buffer {
  const labels = canonical(name).split('.').filter(Boolean);
  const parts: Buffer[] = [];
  for (const l of labels) {
    const b = Buffer.from(l, 'utf8');
    if (b.length > 63) throw new Error(`DNS label too long: ${l}`);
    parts.push(Buffer.from([b.length]), b);
  }
  parts.push(Buffer.from([0]));
  return Buffer.concat(parts);
}

const u16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
};
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};

/** TXT RDATA: character-strings of at most 255 bytes each. */
export function txtData(value: string): Buffer {
  const b = Buffer.from(value, 'utf8');
  const parts: Buffer[] = [];
  for (let i = 0; i < b.length || i === 0; i += 255) {
    const chunk = b.subarray(i, i + 255);
    parts.push(Buffer.from([chunk.length]), chunk);
    if (!b.length) break;
  }
  return Buffer.concat(parts);
}

export const encodeRecord = (r: Omit<ResourceRecord, 'value'>) =>
  Buffer.concat([encodeName(r.name), u16(r.type), u16(r.class), u32(r.ttl), u16(r.data.length), r.data]);

export function encodeMessage(m: Message): Buffer {
  return Buffer.concat([
    u16(m.id),
    u16(m.flags),
    u16(m.questions.length),
    u16(m.answers.length),
    u16(m.authorities.length),
    u16(m.additionals.length),
    ...m.questions.map((q) => Buffer.concat([encodeName(q.name), u16(q.type), u16(q.class)])),
    ...[...m.answers, ...m.authorities, ...m.additionals].map(encodeRecord),
  ]);
}

/**
 * Reads of outside bytes, every one bounds-checked: past the end is a DnsFormatError, never a
 * RangeError, a NaN that loops, or a silently short value.
 */
class Reader {
  constructor(readonly buf: Buffer) {}

  private need(at: number, n: number, what: string) {
    if (!Number.isInteger(at) || at < 0 || at + n > this.buf.length)
      throw new DnsFormatError(`${what} runs past the end (${at + n} > ${this.buf.length} bytes)`);
  }

  u8(at: number, what: string): number {
    this.need(at, 1, what);
    return this.buf[at]!;
  }

  u16(at: number, what: string): number {
    this.need(at, 2, what);
    return this.buf.readUInt16BE(at);
  }

  u32(at: number, what: string): number {
    this.need(at, 4, what);
    return this.buf.readUInt32BE(at);
  }

  u48(at: number, what: string): number {
    this.need(at, 6, what);
    return this.buf.readUIntBE(at, 6);
  }

  bytes(at: number, n: number, what: string): Buffer {
    this.need(at, n, what);
    return this.buf.subarray(at, at + n);
  }

  /**
   * A name, compression pointers followed (RFC 1035 §4.1.4). A pointer may only point back, to an
   * earlier part of the message, so following them ends; and a name is at most 255 bytes.
   */
  name(offset: number): { name: string; next: number } {
    const labels: string[] = [];
    let pos = offset;
    let next = -1;
    let length = 1;
    for (;;) {
      const len = this.u8(pos, 'a name');
      if ((len & 0xc0) === 0xc0) {
        const target = ((len & 0x3f) << 8) | this.u8(pos + 1, 'a name pointer');
        if (target >= pos) throw new DnsFormatError(`a name pointer at ${pos} points forward, to ${target}`);
        if (next < 0) next = pos + 2;
        pos = target;
        continue;
      }
      if (len & 0xc0) throw new DnsFormatError(`a label of unknown type (0x${len.toString(16)}) at ${pos}`);
      if (len === 0) return { name: labels.join('.'), next: next < 0 ? pos + 1 : next };
      length += 1 + len;
      if (length > 255) throw new DnsFormatError('a name longer than 255 bytes');
      labels.push(this.bytes(pos + 1, len, 'a label').toString('utf8'));
      pos += 1 + len;
    }
  }
}

function decodeValue(r: Reader, type: number, start: number, length: number): ResourceRecord['value'] {
  const end = start + length;
  if (type === TYPE.TXT) {
    const strings: string[] = [];
    for (let p = start; p < end;) {
      const l = r.u8(p, 'a TXT string');
      if (p + 1 + l > end) throw new DnsFormatError('a TXT string runs past its record');
      strings.push(r.bytes(p + 1, l, 'a TXT string').toString('utf8'));
      p += 1 + l;
    }
    return strings;
  }
  if (type === TYPE.NS || type === TYPE.CNAME) return r.name(start).name;
  if (type === TYPE.SOA) {
    const m = r.name(start);
    const rn = r.name(m.next);
    return { mname: m.name, rname: rn.name, serial: r.u32(rn.next, 'an SOA serial') };
  }
  // Empty RDATA is an RFC 2136 RRset deletion (class ANY or NONE): nothing to decode.
  if (type === TYPE.A && length === 4) return [...r.bytes(start, 4, 'an A record')].join('.');
  return undefined;
}

/** Reads a message; anything else (short, cut, looping, lying about its lengths) is a DnsFormatError. */
export function decodeMessage(buf: Buffer): Message {
  const r = new Reader(buf);
  if (buf.length < 12) throw new DnsFormatError(`${buf.length} bytes, shorter than a header`);
  const counts = [r.u16(4, 'QDCOUNT'), r.u16(6, 'ANCOUNT'), r.u16(8, 'NSCOUNT'), r.u16(10, 'ARCOUNT')] as const;
  // Each question takes at least 5 bytes and each record 11: counts that cannot fit are lies.
  if (12 + counts[0] * 5 + (counts[1] + counts[2] + counts[3]) * 11 > buf.length)
    throw new DnsFormatError(`its counts (${counts.join(', ')}) do not fit in ${buf.length} bytes`);
  let pos = 12;
  const questions: Question[] = [];
  for (let i = 0; i < counts[0]; i++) {
    const n = r.name(pos);
    questions.push({ name: n.name, type: r.u16(n.next, 'a question type'), class: r.u16(n.next + 2, 'a question class') });
    pos = n.next + 4;
  }
  const records = (count: number) => {
    const out: ResourceRecord[] = [];
    for (let i = 0; i < count; i++) {
      const n = r.name(pos);
      const type = r.u16(n.next, 'a record type');
      const length = r.u16(n.next + 8, 'a record length');
      const start = n.next + 10;
      const data = r.bytes(start, length, 'a record');
      out.push({
        name: n.name,
        type,
        class: r.u16(n.next + 2, 'a record class'),
        ttl: r.u32(n.next + 4, 'a TTL'),
        data,
        value: decodeValue(r, type, start, length),
      });
      pos = start + length;
    }
    return out;
  };
  return {
    id: r.u16(0, 'the id'),
    flags: r.u16(2, 'the flags'),
    questions,
    answers: records(counts[1]),
    authorities: records(counts[2]),
    additionals: records(counts[3]),
  };
}

/** TSIG RDATA (RFC 8945 §4.2): the algorithm, the time, the MAC and what follows it, bounds-checked. */
export function decodeTsigData(data: Buffer): {
  algorithm: string;
  signed: number;
  fudge: number;
  mac: Buffer;
  originalId: number;
  error: number;
  other: Buffer;
} {
  const r = new Reader(data);
  const { name: algorithm, next: p } = r.name(0);
  const macSize = r.u16(p + 8, 'the TSIG MAC size');
  const otherLen = r.u16(p + 14 + macSize, 'the TSIG other length');
  const tsig = {
    algorithm,
    signed: r.u48(p, 'the TSIG time'),
    fudge: r.u16(p + 6, 'the TSIG fudge'),
    mac: r.bytes(p + 10, macSize, 'the TSIG MAC'),
    originalId: r.u16(p + 10 + macSize, 'the TSIG original id'),
    error: r.u16(p + 12 + macSize, 'the TSIG error'),
    other: r.bytes(p + 16 + macSize, otherLen, 'the TSIG other data'),
  };
  if (p + 16 + macSize + otherLen !== data.length) throw new DnsFormatError('the TSIG record holds more than its fields');
  return tsig;
}
