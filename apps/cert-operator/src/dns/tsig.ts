import { createHmac, timingSafeEqual } from 'node:crypto';
import { CLASS, decodeTsigData, encodeName, TYPE, type Message, type ResourceRecord } from './message.js';

/** cert-manager's names for the TSIG algorithms, and their DNS names (RFC 8945 §6). */
export const TSIG_ALGORITHMS = {
  HMACMD5: { name: 'hmac-md5.sig-alg.reg.int', hash: 'md5' },
  HMACSHA1: { name: 'hmac-sha1', hash: 'sha1' },
  HMACSHA256: { name: 'hmac-sha256', hash: 'sha256' },
  HMACSHA512: { name: 'hmac-sha512', hash: 'sha512' },
} as const;
export type TsigAlgorithm = keyof typeof TSIG_ALGORITHMS;

export interface TsigKey {
  name: string;
  algorithm: TsigAlgorithm;
  /** The shared secret, base64 as in BIND's key statements. */
  secret: string;
}

const FUDGE = 300;

const u16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
};
const time48 = (seconds: number) => {
  const b = Buffer.alloc(6);
  b.writeUIntBE(seconds, 0, 6);
  return b;
};

/** The TSIG variables the MAC covers (RFC 8945 §4.3.3). */
const variables = (key: TsigKey, signed: number, error = 0, other: Uint8Array = Buffer.alloc(0)) =>
  Buffer.concat([
    encodeName(key.name),
    u16(CLASS.ANY),
    Buffer.alloc(4),
    encodeName(TSIG_ALGORITHMS[key.algorithm].name),
    time48(signed),
    u16(FUDGE),
    u16(error),
    u16(other.length),
    other,
  ]);

const hmac = (key: TsigKey, ...parts: Uint8Array[]) => {
  const h = createHmac(TSIG_ALGORITHMS[key.algorithm].hash, Buffer.from(key.secret, 'base64'));
  for (const p of parts) h.update(p);
  return h.digest();
};

/** Signs a request: returns the TSIG record to append, and its MAC (a signed response covers it). */
export function signRequest(wire: Buffer, message: Message, key: TsigKey, now = Date.now()): { record: ResourceRecord; mac: Buffer } {
  const signed = Math.floor(now / 1000);
  const mac = hmac(key, wire, variables(key, signed));
  const data = Buffer.concat([
    encodeName(TSIG_ALGORITHMS[key.algorithm].name),
    time48(signed),
    u16(FUDGE),
    u16(mac.length),
    mac,
    u16(message.id),
    u16(0),
    u16(0),
  ]);
  return { record: { name: key.name, type: TYPE.TSIG, class: CLASS.ANY, ttl: 0, data }, mac };
}

/**
 * Checks a response's TSIG against the request's MAC. Returns why it does not verify, or nothing.
 * `responseWire` is the response as received; its TSIG is the last record.
 */
export function verifyResponse(responseWire: Buffer, response: Message, key: TsigKey, requestMac: Buffer): string | undefined {
  const tsig = response.additionals.at(-1);
  if (!tsig || tsig.type !== TYPE.TSIG) return 'the response is not signed';
  let fields;
  try {
    fields = decodeTsigData(tsig.data);
  } catch (err) {
    return `the response's TSIG record cannot be read (${(err as Error).message})`;
  }
  const { signed, mac, error, other, originalId } = fields;
  if (error) return `TSIG error ${error === 16 ? 'BADSIG' : error === 17 ? 'BADKEY' : error === 18 ? 'BADTIME' : error}`;
  // The response without its TSIG record, ARCOUNT one less, and the ID it was sent with.
  const tsigLength = tsig.data.length + encodeName(tsig.name).length + 10;
  if (tsigLength > responseWire.length - 12) return "the response's TSIG record is longer than the response";
  const body = Buffer.from(responseWire.subarray(0, responseWire.length - tsigLength));
  body.writeUInt16BE(response.additionals.length - 1, 10);
  body.writeUInt16BE(originalId, 0);
  const want = hmac(key, u16(requestMac.length), requestMac, body, variables(key, signed, error, other));
  if (want.length !== mac.length || !timingSafeEqual(want, mac)) return 'the response signature does not verify';
  return undefined;
}
