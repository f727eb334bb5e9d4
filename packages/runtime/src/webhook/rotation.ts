import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { ipv6Groups, pemCertificates } from './self-signed.js';

/**
 * When and how the runtime's own webhook certificates change: one pure decision over what the
 * Secret holds, what every caller trusts and the time, table-tested like cert-manager's trigger
 * policies (rotation.test.ts). The CA lives a year and the serving certificate 90 days; each is
 * renewed at two thirds of its life.
 *
 * A CA rotates in two phases, so that no caller ever meets a certificate it cannot verify:
 *   1. the new CA joins the bundle beside the old one (the serving certificate stays as it is);
 *   2. the bundle is injected into every webhook configuration and CRD, and each is seen to hold it;
 *   3. only then is a serving certificate from the new CA issued, and served.
 * If the injection fails, step 3 never comes: the old certificate keeps serving. An old CA leaves
 * the bundle when it expires.
 */
export const CA_LIFETIME_MS = 365 * 86_400_000;
export const SERVING_LIFETIME_MS = 90 * 86_400_000;
const RENEW_AT = 2 / 3;

export interface CertSpan {
  notBefore: number;
  notAfter: number;
}

/** A CA of the bundle, by fingerprint; `hasKey` when the Secret also holds its private key. */
export interface HeldCa extends CertSpan {
  fingerprint: string;
  hasKey: boolean;
}

/** What the Secret holds, parsed: the CA bundle in order, and the serving certificate. */
export interface HeldCertificates {
  cas: HeldCa[];
  /** `issuer`: the fingerprint of the bundle's CA that signed it (none: no CA there did). */
  serving?: CertSpan & { hosts: string[]; issuer?: string };
}

/** A webhook configuration or CRD that calls this webhook, and the CAs its caBundle holds. */
export interface TargetTrust {
  name: string;
  trusts: string[];
}

export type RotationDecision =
  /** Generate a CA and add it to the front of the bundle (phase 1); nothing else changes. */
  | { action: 'add-ca'; reason: string }
  /** Drop expired CAs (and their keys) from the bundle. */
  | { action: 'prune'; expired: string[]; reason: string }
  /** Write the bundle into the targets that do not hold exactly it (phase 2). */
  | { action: 'inject'; targets: string[]; reason: string }
  /** Issue a serving certificate for `hosts`, signed by the CA `signer` (phase 3, and renewals). */
  | { action: 'issue-serving'; signer: string; hosts: string[]; reason: string }
  /** Nothing can be done until the targets are seen to trust a CA with a key (an injection on its way, or failing). */
  | { action: 'wait'; reason: string }
  | { action: 'keep'; recheckAt: number };

const renewalTime = (s: CertSpan) => s.notBefore + (s.notAfter - s.notBefore) * RENEW_AT;

/**
 * What to do next. `hosts` are the names this replica is called by: a serving certificate that
 * lacks one is issued again for the union with the names it has, so replicas called by different
 * names (a rolling upgrade that changes `--webhook-host`) converge on one certificate for all of
 * them instead of re-issuing against each other. A renewal issues for `hosts` alone, so names no
 * replica asks for any more leave then.
 */
export function decideRotation(held: HeldCertificates, targets: TargetTrust[], hosts: string[], now: number): RotationDecision {
  const live = held.cas.filter((c) => c.notAfter > now);
  const signers = live.filter((c) => c.hasKey).sort((a, b) => b.notBefore - a.notBefore);
  const newest = signers[0];
  if (!newest) return { action: 'add-ca', reason: held.cas.length ? 'no CA with a key is still valid' : 'no CA yet' };
  if (now >= renewalTime(newest))
    return { action: 'add-ca', reason: `the CA is past two thirds of its life (expires ${new Date(newest.notAfter).toISOString()})` };
  const expired = held.cas.filter((c) => c.notAfter <= now).map((c) => c.fingerprint);
  if (expired.length) return { action: 'prune', expired, reason: `${expired.length} CA(s) of the bundle expired` };

  const bundle = live
    .map((c) => c.fingerprint)
    .sort()
    .join(',');
  const stale = targets.filter((t) => [...new Set(t.trusts)].sort().join(',') !== bundle).map((t) => t.name);
  if (stale.length) return { action: 'inject', targets: stale, reason: `${stale.join(', ')} do not hold the current CA bundle` };

  // The newest CA every caller is seen to trust: a certificate from any newer one would fail them.
  const signer = signers.find((c) => targets.every((t) => t.trusts.includes(c.fingerprint)));
  if (!signer) return { action: 'wait', reason: 'no CA with a key is trusted by every webhook configuration yet' };
  const serving = held.serving;
  const want = [...new Set(hosts.map(printedHost))];
  if (!serving) return { action: 'issue-serving', signer: signer.fingerprint, hosts: want, reason: 'no serving certificate yet' };
  if (serving.issuer !== signer.fingerprint) {
    return {
      action: 'issue-serving',
      signer: signer.fingerprint,
      hosts: union(serving.hosts, want),
      reason: serving.issuer ? 'every caller now trusts the newer CA' : 'the serving certificate is not signed by a CA of the bundle',
    };
  }
  const missing = want.filter((h) => !serving.hosts.includes(h));
  if (missing.length)
    return {
      action: 'issue-serving',
      signer: signer.fingerprint,
      hosts: union(serving.hosts, want),
      reason: `the serving certificate does not name ${missing.join(', ')}`,
    };
  if (now >= renewalTime(serving))
    return {
      action: 'issue-serving',
      signer: signer.fingerprint,
      hosts: want,
      reason: `the serving certificate is past two thirds of its life (expires ${new Date(serving.notAfter).toISOString()})`,
    };
  return { action: 'keep', recheckAt: Math.min(renewalTime(newest), renewalTime(serving), ...live.map((c) => c.notAfter)) };
}

const union = (a: string[], b: string[]) => [...new Set([...a, ...b])];

/** An IPv6 address as OpenSSL prints one in a subjectAltName (eight groups, no leading zeros). */
export function printedHost(h: string): string {
  return isIP(h) === 6
    ? ipv6Groups(h)
        .map((g) => parseInt(g, 16).toString(16).toUpperCase())
        .join(':')
    : h;
}

const span = (c: X509Certificate): CertSpan => ({ notBefore: new Date(c.validFrom).getTime(), notAfter: new Date(c.validTo).getTime() });

/** The names a certificate serves, as its subjectAltName lists them (IPv6 as OpenSSL prints it). */
export function certificateHosts(c: X509Certificate): string[] {
  return (c.subjectAltName ?? '')
    .split(', ')
    .filter(Boolean)
    .map((e) => e.replace(/^(DNS|IP Address):/, ''));
}

/** The private keys of a PEM bundle, each a whole PEM block. */
export const pemKeys = (bundle: string): string[] =>
  bundle.match(/-----BEGIN (?:EC |RSA )?PRIVATE KEY-----[\s\S]+?-----END (?:EC |RSA )?PRIVATE KEY-----/g) ?? [];

/** The CAs of a PEM bundle that parse, in order, with their PEM. Garbage is skipped. */
export function bundleCas(pem: string | undefined): { pem: string; cert: X509Certificate }[] {
  const out: { pem: string; cert: X509Certificate }[] = [];
  for (const block of pemCertificates(pem ?? '')) {
    try {
      out.push({ pem: `${block}\n`, cert: new X509Certificate(block) });
    } catch {
      /* unreadable: not part of the bundle */
    }
  }
  return out;
}

/** Which of `keys` belongs to `cert`, if any. */
export function keyFor(cert: X509Certificate, keys: string[]): string | undefined {
  const spki = cert.publicKey.export({ type: 'spki', format: 'der' });
  return keys.find((k) => {
    try {
      return createPublicKey(createPrivateKey(k)).export({ type: 'spki', format: 'der' }).equals(spki);
    } catch {
      return false;
    }
  });
}

/** Parses the Secret's `ca.crt` (the bundle, newest first), `ca.key` (the keys of its CAs) and `tls.crt`. */
export function heldCertificates(data: { caCert?: string; caKey?: string; cert?: string; key?: string }): HeldCertificates {
  const cas = bundleCas(data.caCert);
  const keys = pemKeys(data.caKey ?? '');
  const held: HeldCertificates = { cas: cas.map(({ cert }) => ({ ...span(cert), fingerprint: cert.fingerprint256, hasKey: !!keyFor(cert, keys) })) };
  try {
    if (data.cert && data.key) {
      const c = new X509Certificate(data.cert);
      const issuer = cas.find(({ cert }) => c.checkIssued(cert) && c.verify(cert.publicKey))?.cert.fingerprint256;
      held.serving = { ...span(c), hosts: certificateHosts(c), issuer };
    }
  } catch {
    /* unreadable: issued again */
  }
  return held;
}

/** The fingerprints of the CAs a base64 caBundle holds. */
export const trustedBy = (caBundle: string | undefined): string[] =>
  bundleCas(caBundle ? Buffer.from(caBundle, 'base64').toString('utf8') : undefined).map((c) => c.cert.fingerprint256);
