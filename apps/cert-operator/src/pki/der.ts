/**
 * Just enough DER to write PKCS#12 files: definite lengths, the universal types they use and
 * context-specific explicit tags. Writing only; what we write is read back by OpenSSL, Java and
 * Node in the tests.
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
  if (bytes[0] & 0x80) bytes.unshift(0);
  return tlv(0x02, Buffer.from(bytes));
}

export function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const out: number[] = [parts[0] * 40 + parts[1]];
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
    be[i] = le[i + 1];
    be[i + 1] = le[i];
  }
  return be;
}

/** One TLV read from DER: its tag, its content, and where the next one starts. */
export interface Tlv {
  tag: number;
  content: Buffer;
  next: number;
}

export function readTlv(buf: Buffer, offset = 0): Tlv {
  const tag = buf[offset];
  let len = buf[offset + 1];
  let start = offset + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[start + i];
    start += n;
  }
  return { tag, content: buf.subarray(start, start + len), next: start + len };
}

/** The TLVs inside a constructed value (a SEQUENCE's items). */
export function children(content: Buffer): Tlv[] {
  const out: Tlv[] = [];
  for (let p = 0; p < content.length; ) {
    const t = readTlv(content, p);
    out.push(t);
    p = t.next;
  }
  return out;
}

export function decodeOid(content: Buffer): string {
  const parts = [Math.floor(content[0] / 40), content[0] % 40];
  let v = 0;
  for (const b of content.subarray(1)) {
    v = v * 128 + (b & 0x7f);
    if (!(b & 0x80)) {
      parts.push(v);
      v = 0;
    }
  }
  return parts.join('.');
}

export const utf8String = (s: string) => tlv(0x0c, Buffer.from(s, 'utf8'));
export const ia5 = (tag: number, s: string) => tlv(tag, Buffer.from(s, 'ascii'));
