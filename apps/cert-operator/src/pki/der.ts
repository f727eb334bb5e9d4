/**
 * Just enough DER: writing PKCS#12 files, CSRs, certificates and their extensions (definite
 * lengths, the universal types they use, context-specific tags; what we write is read back by
 * OpenSSL, Java and Node in the tests), and reading CSRs and certificates, strictly (DerError).
 */

const length = (n: number): Buffer => {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
};

export const tlv = (tag: number, content: Buffer): Buffer => Buffer.concat([Buffer.from([tag]), length(content.length), content]);

export const sequence = (...items: Buffer[]) => tlv(0x30, Buffer.concat(items));
export const set = (...items: Buffer[]) => tlv(0x31, Buffer.concat(items));
export const octets = (b: Buffer) => tlv(0x04, b);
export const nul = () => Buffer.from([0x05, 0x00]);
/** [n] EXPLICIT, constructed. */
export const explicit = (n: number, content: Buffer) => tlv(0xa0 | n, content);
/** [n] IMPLICIT primitive (EncryptedContentInfo's encryptedContent). */
export const implicitPrimitive = (n: number, content: Buffer) => tlv(0x80 | n, content);

export function integer(n: number): Buffer {
  const bytes: number[] = [];
  let v = n;
  do {
    bytes.unshift(v & 0xff);
    v = Math.floor(v / 256);
  } while (v > 0);
  if (bytes[0]! & 0x80) bytes.unshift(0); // do … while: at least one byte
  return tlv(0x02, Buffer.from(bytes));
}

/** An INTEGER from unsigned big-endian bytes, in its shortest form, positive. */
export function unsignedInteger(bytes: Buffer): Buffer {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const b = bytes.subarray(start);
  return tlv(0x02, b[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b);
}

export const bitString = (b: Buffer, unusedBits = 0) => tlv(0x03, Buffer.concat([Buffer.from([unusedBits]), b]));
export const boolean = (v: boolean) => Buffer.from([0x01, 0x01, v ? 0xff : 0x00]);

/** RFC 5280 §4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050; whole seconds, Zulu. */
export function time(d: Date): Buffer {
  const year = d.getUTCFullYear();
  if (!(year >= 1950 && year <= 9999)) throw new RangeError(`a certificate time in ${year}`);
  const iso = d.toISOString(); // 2026-11-29T01:35:17.000Z
  const digits = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  return year < 2050 ? tlv(0x17, Buffer.from(digits.slice(2), 'ascii')) : tlv(0x18, Buffer.from(digits, 'ascii'));
}

export function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const [first = 0, second = 0] = parts;
  const out: number[] = [first * 40 + second];
  for (const p of parts.slice(2)) {
    const chunk: number[] = [p & 0x7f];
    for (let v = Math.floor(p / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift((v & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

/** BMPString: UTF-16 big-endian. */
export const bmpString = (s: string) => tlv(0x1e, utf16be(s));

export function utf16be(s: string): Buffer {
  const le = Buffer.from(s, 'utf16le');
  const be = Buffer.alloc(le.length);
  for (let i = 0; i < le.length; i += 2) {
    be[i] = le[i + 1]!;
    be[i + 1] = le[i]!;
  }
  return be;
}

/** DER that does not parse: a length past its end, an indefinite or absurd length, a missing part. */
export class DerError extends Error {
  constructor(message: string) {
    super(`malformed DER: ${message}`);
    this.name = 'DerError';
  }
}

/** One TLV read from DER: its tag, its content, and where the next one starts. */
export interface Tlv {
  tag: number;
  content: Buffer;
  next: number;
  /** The whole TLV as encoded, header included (what a signature covers). */
  raw: Buffer;
}

/**
 * Reads one TLV at `offset`, every length checked against the buffer: the bytes may come from a
 * tenant's CSR or a Secret someone else wrote. Single-byte tags (all RFC 5280 uses), definite
 * lengths of at most four bytes (DER forbids the indefinite form).
 */
export function readTlv(buf: Buffer, offset = 0): Tlv {
  if (offset + 2 > buf.length) throw new DerError(`a value at ${offset} is cut short`);
  const tag = buf[offset]!;
  if ((tag & 0x1f) === 0x1f) throw new DerError(`a multi-byte tag at ${offset}`);
  let len = buf[offset + 1]!;
  let start = offset + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0) throw new DerError(`an indefinite length at ${offset}`);
    if (n > 4) throw new DerError(`a length of ${n} bytes at ${offset}`);
    if (start + n > buf.length) throw new DerError(`the length at ${offset} is cut short`);
    len = buf.readUIntBE(start, n);
    start += n;
  }
  if (start + len > buf.length) throw new DerError(`a value of ${len} bytes at ${offset} runs past the end (${buf.length} bytes)`);
  return { tag, content: buf.subarray(start, start + len), next: start + len, raw: buf.subarray(offset, start + len) };
}

/** The TLVs inside a constructed value (a SEQUENCE's items). */
export function children(content: Buffer): Tlv[] {
  const out: Tlv[] = [];
  for (let p = 0; p < content.length;) {
    const t = readTlv(content, p);
    out.push(t);
    p = t.next;
  }
  return out;
}

export function decodeOid(content: Buffer): string {
  if (!content.length) throw new DerError('an empty OBJECT IDENTIFIER');
  if (content[content.length - 1]! & 0x80) throw new DerError('an OBJECT IDENTIFIER cut short');
  const first = content[0]!;
  const parts = first < 80 ? [Math.floor(first / 40), first % 40] : [2, first - 80];
  let v = 0;
  for (const b of content.subarray(1)) {
    v = v * 128 + (b & 0x7f);
    if (v > Number.MAX_SAFE_INTEGER / 128) throw new DerError('an OBJECT IDENTIFIER arc too large');
    if (!(b & 0x80)) {
      parts.push(v);
      v = 0;
    }
  }
  return parts.join('.');
}

export const utf8String = (s: string) => tlv(0x0c, Buffer.from(s, 'utf8'));
export const ia5 = (tag: number, s: string) => tlv(tag, Buffer.from(s, 'ascii'));
