import { createHash } from 'node:crypto';
import { x509 } from '../pki/crypto-provider.js';

/**
 * ACME Renewal Information (ARI, RFC 9773): the CA says when each certificate should be renewed,
 * as a window, and may move it (earlier after a revocation event, later to spread its load).
 * Everything here is pure: the certificate's identifier, the decoder of the CA's answer (outside
 * bytes: a tenant's Issuer may name any server), and the two times derived from it, each stable
 * for a Certificate so that reconciles, restarts and replicas agree without storing a random draw.
 */

const HOUR = 3_600_000;

/**
 * When renewal info is asked for again. The CA's Retry-After is honoured within [1 h, 24 h]: above
 * an hour because a tenant's server could otherwise make the operator poll each of its
 * certificates every few seconds on the workers every tenant shares; below a day because a window
 * moved after a revocation event must be seen within a day even for six-day certificates (RFC 9773
 * §4.3 suggests bounding it to a day; cert-manager allows 7). Six hours when the CA names no time
 * (what Let's Encrypt and Pebble send); one hour after a failed fetch.
 */
export const ARI_POLL = { defaultMs: 6 * HOUR, minMs: HOUR, maxMs: 24 * HOUR, afterErrorMs: HOUR, jitter: 0.1 } as const;

/** The CA's answer, or what was made of the certificate, could not be used. */
export class RenewalInfoError extends Error {
  override name = 'RenewalInfoError';
}

export interface RenewalWindow {
  start: Date;
  end: Date;
}

export interface RenewalInfo {
  window: RenewalWindow;
  /** A page the CA offers to explain the window (an http(s) URL; anything else is dropped). */
  explanationURL?: string;
}

const b64url = (b: Buffer) => b.toString('base64url');

/**
 * The ARI certificate identifier (RFC 9773 §4.1): the base64url key identifier of the Authority Key
 * Identifier, a dot, and the base64url bytes of the serial number's DER INTEGER value. Serials are
 * positive (RFC 5280): the minimal big-endian bytes, with a leading zero byte when the top bit is
 * set, which is what DER encodes; libraries print the serial without that byte.
 */
export function ariCertId(authorityKeyIdHex: string, serialHex: string): string {
  const clean = (h: string) => h.replace(/[:\s]/g, '').toLowerCase();
  const aki = clean(authorityKeyIdHex);
  let serial = clean(serialHex).replace(/^0+(?=.)/, '');
  if (!/^[0-9a-f]+$/.test(aki) || !/^[0-9a-f]+$/.test(serial)) throw new RenewalInfoError('the key identifier and serial must be hexadecimal');
  if (serial.length % 2) serial = `0${serial}`;
  let bytes = Buffer.from(serial, 'hex');
  if (bytes[0]! & 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
  return `${b64url(Buffer.from(aki, 'hex'))}.${b64url(bytes)}`;
}

/** The ARI identifier of a DER certificate; a certificate without an Authority Key Identifier has none. */
export function certIdOf(der: Buffer | ArrayBuffer): string {
  const c = new x509.X509Certificate(der instanceof Buffer ? new Uint8Array(der) : der);
  const aki = c.getExtension(x509.AuthorityKeyIdentifierExtension)?.keyId;
  if (!aki) throw new RenewalInfoError('the certificate has no Authority Key Identifier, so no ARI identifier');
  return ariCertId(aki, c.serialNumber);
}

/** RFC 3339 as the CA writes it (a `T`, a zone): what Date.parse alone would accept is wider. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;
const MAX_BODY = 64 * 1024;
const MAX_URL = 2048;

function timestamp(v: unknown, what: string): Date {
  if (typeof v !== 'string' || !RFC3339.test(v)) throw new RenewalInfoError(`suggestedWindow.${what} is not an RFC 3339 timestamp`);
  const t = Date.parse(v);
  if (!Number.isFinite(t)) throw new RenewalInfoError(`suggestedWindow.${what} is not a valid time`);
  return new Date(t);
}

/**
 * The CA's renewal info, decoded (RFC 9773 §4.2): a suggested window whose start precedes its end,
 * and maybe an explanation URL. Anything else is refused with RenewalInfoError, which the caller
 * treats as no answer (§4.2: "as though they failed to receive any response").
 */
export function decodeRenewalInfo(body: unknown): RenewalInfo {
  let doc = body;
  if (typeof body === 'string' || Buffer.isBuffer(body)) {
    const text = body.toString();
    if (text.length > MAX_BODY) throw new RenewalInfoError(`the renewal info is larger than ${MAX_BODY} bytes`);
    try {
      doc = JSON.parse(text);
    } catch {
      throw new RenewalInfoError('the renewal info is not JSON');
    }
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new RenewalInfoError('the renewal info is not a JSON object');
  const w = (doc as { suggestedWindow?: unknown }).suggestedWindow;
  if (!w || typeof w !== 'object' || Array.isArray(w)) throw new RenewalInfoError('the renewal info has no suggestedWindow');
  const start = timestamp((w as { start?: unknown }).start, 'start');
  const end = timestamp((w as { end?: unknown }).end, 'end');
  if (!(start.getTime() < end.getTime())) throw new RenewalInfoError('suggestedWindow.end does not come after its start');
  const explanation = (doc as { explanationURL?: unknown }).explanationURL;
  return { window: { start, end }, ...(isWebUrl(explanation) ? { explanationURL: explanation } : {}) };
}

function isWebUrl(v: unknown): v is string {
  if (typeof v !== 'string' || v.length > MAX_URL) return false;
  try {
    const u = new URL(v);
    return u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    return false;
  }
}

/** A fraction in [0, 1) fixed by `seed`: the same for every reconcile, restart and replica. */
export function fractionOf(seed: string): number {
  return createHash('sha256').update(seed).digest().readUIntBE(0, 6) / 2 ** 48;
}

/**
 * How much of a window's end no renewal is planned in: a renewal starts when its time comes, then
 * waits for a worker and the CA's answers, and one planned in the window's last seconds started
 * after it under load (bench/README.md, short lifetimes: up to 20.7 s past a 360 s window). A
 * tenth of the window, at most 10 minutes (a day's window loses 0.7 % of it).
 */
export const WINDOW_END_LEFT = { fraction: 0.1, maxMs: 10 * 60_000 } as const;

/**
 * When inside the window to renew: a point spread uniformly across Certificates (RFC 9773 §4.2
 * asks for a random one, so the CA's load is spread) but fixed for one Certificate and one window,
 * so `status.renewalTime` does not move between reconciles. Whole seconds, never before the start,
 * never in the end WINDOW_END_LEFT keeps for the queue.
 */
export function pointInWindow(w: RenewalWindow, seed: string): Date {
  const start = w.start.getTime();
  const span = w.end.getTime() - start;
  const usable = span - Math.min(span * WINDOW_END_LEFT.fraction, WINDOW_END_LEFT.maxMs);
  const at = start + fractionOf(`${seed}/${start}/${w.end.getTime()}`) * usable;
  return new Date(Math.max(start, Math.floor(at / 1000) * 1000));
}

/**
 * The wait before asking again: the CA's Retry-After (ARI_POLL's default when absent or zero),
 * spread by ±10 % fixed per Certificate, so certificates first checked together (after an operator
 * start) are not all checked together again; then bounded by ARI_POLL.
 */
export function nextCheckDelay(retryAfterMs: number | undefined, seed: string, base: number = ARI_POLL.defaultMs): number {
  const wanted = retryAfterMs && retryAfterMs > 0 ? retryAfterMs : base;
  const spread = wanted * (1 + ARI_POLL.jitter * (2 * fractionOf(`${seed}/poll`) - 1));
  return Math.round(Math.min(ARI_POLL.maxMs, Math.max(ARI_POLL.minMs, spread)));
}
