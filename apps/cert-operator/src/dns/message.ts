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

export const encodeRecord = (r: Omit<ResourceRecord, 'value'>) => Buffer.concat([encodeName(r.name), u16(r.type), u16(r.class), u32(r.ttl), u16(r.data.length), r.data]);

export function encodeMessage(m: Message): Buffer {
  return Buffer.concat([
    u16(m.id), u16(m.flags), u16(m.questions.length), u16(m.answers.length), u16(m.authorities.length), u16(m.additionals.length),
    ...m.questions.map((q) => Buffer.concat([encodeName(q.name), u16(q.type), u16(q.class)])),
    ...[...m.answers, ...m.authorities, ...m.additionals].map(encodeRecord),
  ]);
}

function decodeName(buf: Buffer, offset: number): { name: string; next: number } {
  const labels: string[] = [];
  let pos = offset;
  let next = -1;
  for (let jumps = 0; jumps < 128; jumps++) {
    const len = buf[pos];
    if (len === undefined) throw new Error('DNS name runs past the message');
    if ((len & 0xc0) === 0xc0) {
      if (next < 0) next = pos + 2;
      pos = ((len & 0x3f) << 8) | buf[pos + 1];
      continue;
    }
    if (len === 0) return { name: labels.join('.'), next: next < 0 ? pos + 1 : next };
    labels.push(buf.toString('utf8', pos + 1, pos + 1 + len));
    pos += 1 + len;
  }
  throw new Error('DNS name compression loops');
}

function decodeValue(buf: Buffer, type: number, start: number, length: number): ResourceRecord['value'] {
  if (type === TYPE.TXT) {
    const strings: string[] = [];
    for (let p = start; p < start + length; ) {
      const l = buf[p];
      strings.push(buf.toString('utf8', p + 1, p + 1 + l));
      p += 1 + l;
    }
    return strings;
  }
  if (type === TYPE.NS || type === TYPE.CNAME) return decodeName(buf, start).name;
  if (type === TYPE.SOA) {
    const m = decodeName(buf, start);
    const r = decodeName(buf, m.next);
    return { mname: m.name, rname: r.name, serial: buf.readUInt32BE(r.next) };
  }
  if (type === TYPE.A) return [...buf.subarray(start, start + 4)].join('.');
  return undefined;
}

export function decodeMessage(buf: Buffer): Message {
  if (buf.length < 12) throw new Error('DNS message shorter than its header');
  const counts = [buf.readUInt16BE(4), buf.readUInt16BE(6), buf.readUInt16BE(8), buf.readUInt16BE(10)];
  let pos = 12;
  const questions: Question[] = [];
  for (let i = 0; i < counts[0]; i++) {
    const n = decodeName(buf, pos);
    questions.push({ name: n.name, type: buf.readUInt16BE(n.next), class: buf.readUInt16BE(n.next + 2) });
    pos = n.next + 4;
  }
  const records = (count: number) => {
    const out: ResourceRecord[] = [];
    for (let i = 0; i < count; i++) {
      const n = decodeName(buf, pos);
      const type = buf.readUInt16BE(n.next);
      const length = buf.readUInt16BE(n.next + 8);
      const start = n.next + 10;
      out.push({ name: n.name, type, class: buf.readUInt16BE(n.next + 2), ttl: buf.readUInt32BE(n.next + 4), data: buf.subarray(start, start + length), value: decodeValue(buf, type, start, length) });
      pos = start + length;
    }
    return out;
  };
  return { id: buf.readUInt16BE(0), flags: buf.readUInt16BE(2), questions, answers: records(counts[1]), authorities: records(counts[2]), additionals: records(counts[3]) };
}
