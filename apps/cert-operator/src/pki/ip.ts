import { isIPv4, isIPv6 } from 'node:net';

/**
 * An IP address as the bytes a certificate stores (4 or 16), or undefined if it is not one.
 * `2001:db8::1`, `2001:DB8:0:0:0:0:0:1` and `2001:0db8::0001` are the same address: compared as
 * text they looked different, and a Certificate was re-issued after every issuance.
 */
export function ipBytes(ip: string): Buffer | undefined {
  if (isIPv4(ip)) return Buffer.from(ip.split('.').map(Number));
  if (!isIPv6(ip)) return undefined;
  let s = ip.toLowerCase().replace(/%.*$/, '');
  // A trailing dotted quad (::ffff:192.0.2.1) is the last two groups.
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (quad) {
    const [a = 0, b = 0, c = 0, d = 0] = quad.slice(1).map(Number);
    s = `${s.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = s.split('::');
  const h = head ? head.split(':') : [];
  const t = tail === undefined ? [] : tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2));
  return out;
}

/** One spelling per address (hex of its bytes); text that is not an address is kept as it is. */
export const normalizeIP = (ip: string): string => ipBytes(ip)?.toString('hex') ?? ip;
