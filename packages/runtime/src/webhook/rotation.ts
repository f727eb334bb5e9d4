import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { ipv6Groups, pemCertificates } from './self-signed.js';

/**
 * When the runtime's own serving certificates must be renewed: a pure decision over what the
 * Secret holds and the time, table-tested like cert-manager's trigger policies. The CA lives a year
 * and the serving certificate 90 days; each is renewed at two thirds of its life, so a replica that
 * missed a rotation still serves a valid certificate for a month.
 */
export const CA_LIFETIME_MS = 365 * 86_400_000;
export const SERVING_LIFETIME_MS = 90 * 86_400_000;
const RENEW_AT = 2 / 3;

export interface CertSpan {
  notBefore: number;
  notAfter: number;
}

/** What the Secret holds, parsed; `undefined` for what is missing or unreadable. */
export interface HeldCertificates {
  ca?: CertSpan;
  serving?: CertSpan & { hosts: string[]; signedByCa: boolean };
}

export type RotationDecision =
  | { action: 'keep'; recheckAt: number }
  | { action: 'issue-ca' | 'issue-serving'; reason: string };

const renewalTime = (s: CertSpan) => s.notBefore + (s.notAfter - s.notBefore) * RENEW_AT;

export function decideRotation(held: HeldCertificates, hosts: string[], now: number): RotationDecision {
  const { ca, serving } = held;
  if (!ca) return { action: 'issue-ca', reason: 'no CA yet' };
  if (now >= renewalTime(ca)) return { action: 'issue-ca', reason: `the CA is past two thirds of its life (expires ${new Date(ca.notAfter).toISOString()})` };
  if (!serving) return { action: 'issue-serving', reason: 'no serving certificate yet' };
  if (!serving.signedByCa) return { action: 'issue-serving', reason: 'the serving certificate is not signed by the current CA' };
  const want = [...new Set(hosts.map(printedHost))].sort().join(',');
  if ([...serving.hosts].sort().join(',') !== want) return { action: 'issue-serving', reason: `the serving certificate names ${serving.hosts.join(', ')}, not ${hosts.join(', ')}` };
  if (now >= renewalTime(serving)) return { action: 'issue-serving', reason: `the serving certificate is past two thirds of its life (expires ${new Date(serving.notAfter).toISOString()})` };
  return { action: 'keep', recheckAt: Math.min(renewalTime(ca), renewalTime(serving)) };
}

/** An IPv6 address as OpenSSL prints one in a subjectAltName (eight groups, no leading zeros). */
export function printedHost(h: string): string {
  return isIP(h) === 6 ? ipv6Groups(h).map((g) => parseInt(g, 16).toString(16).toUpperCase()).join(':') : h;
}

const span = (c: X509Certificate): CertSpan => ({ notBefore: new Date(c.validFrom).getTime(), notAfter: new Date(c.validTo).getTime() });

/** The names a certificate serves, as its subjectAltName lists them (IPv6 as OpenSSL prints it). */
export function certificateHosts(c: X509Certificate): string[] {
  return (c.subjectAltName ?? '').split(', ').filter(Boolean).map((e) => e.replace(/^(DNS|IP Address):/, ''));
}

/** Parses the Secret's `ca.crt` (first PEM block: the current CA) and `tls.crt`. */
export function heldCertificates(data: { caCert?: string; caKey?: string; cert?: string; key?: string }): HeldCertificates {
  const held: HeldCertificates = {};
  let ca: X509Certificate | undefined;
  try {
    const current = data.caCert && data.caKey ? pemCertificates(data.caCert)[0] : undefined;
    if (current) ca = new X509Certificate(current);
  } catch {
    ca = undefined;
  }
  if (ca) held.ca = span(ca);
  try {
    if (data.cert && data.key) {
      const c = new X509Certificate(data.cert);
      held.serving = { ...span(c), hosts: certificateHosts(c), signedByCa: !!ca && c.checkIssued(ca) && c.verify(ca.publicKey) };
    }
  } catch {
    /* unreadable: issued again */
  }
  return held;
}
