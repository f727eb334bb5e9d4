/**
 * The few DER encodings a self-signed X.509 certificate needs (X.690). The runtime signs its own
 * webhook and metrics serving certificates when nothing else provides them; an ASN.1 library for
 * that would cost every operator's image and memory more than these forty lines.
 */

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** A tag-length-value triple. */
export const tlv = (tag: number, ...content: Buffer[]): Buffer => {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
};

export const sequence = (...items: Buffer[]): Buffer => tlv(0x30, ...items);
export const set = (...items: Buffer[]): Buffer => tlv(0x31, ...items);
export const octetString = (b: Buffer): Buffer => tlv(0x04, b);
export const bitString = (b: Buffer, unusedBits = 0): Buffer => tlv(0x03, Buffer.from([unusedBits]), b);
export const boolean = (v: boolean): Buffer => tlv(0x01, Buffer.from([v ? 0xff : 0x00]));
export const utf8String = (s: string): Buffer => tlv(0x0c, Buffer.from(s, 'utf8'));
/** `[n] EXPLICIT`: a constructed context-specific tag around an encoded value. */
export const explicit = (n: number, inner: Buffer): Buffer => tlv(0xa0 | n, inner);
/** `[n] IMPLICIT` of a primitive type: the bytes with a context-specific tag. */
export const implicit = (n: number, bytes: Buffer): Buffer => tlv(0x80 | n, bytes);

/** A non-negative INTEGER from its big-endian bytes (minimal, with a 0x00 when the top bit is set). */
export function unsignedInteger(bytes: Buffer): Buffer {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  const b = bytes.subarray(i);
  return tlv(0x02, b[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b);
}

export const integer = (n: number): Buffer => {
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return unsignedInteger(Buffer.from(bytes.length ? bytes : [0]));
};

export function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const out = [40 * a! + b!];
  for (const arc of rest) {
    const chunk = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift(0x80 | (v & 0x7f));
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

/** UTCTime before 2050, GeneralizedTime from then on (RFC 5280 4.1.2.5), to the second, in UTC. */
export function time(ms: number): Buffer {
  const iso = new Date(Math.floor(ms / 1000) * 1000).toISOString(); // 2026-11-24T09:00:00.000Z
  const digits = iso.slice(0, 19).replace(/[-:T]/g, '');
  const year = Number(iso.slice(0, 4));
  return year < 2050 ? tlv(0x17, Buffer.from(`${digits.slice(2)}Z`)) : tlv(0x18, Buffer.from(`${digits}Z`));
}
