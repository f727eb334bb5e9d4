/**
 * ACME profiles (draft-aaron-acme-profiles; Let's Encrypt's `classic`, `tlsserver`, `shortlived`):
 * the directory's `meta.profiles` names what a CA offers, and a new order may ask for one. A
 * profile is asked for by the issuer's `acme.profile`, or for one Certificate by this annotation,
 * which travels to its CertificateRequests and Orders.
 */
export const PROFILE_ANNOTATION = 'acme.cert.opkit.dev/profile';

/** Why `wanted` cannot be asked of a CA offering `offered` (its directory's meta.profiles), or undefined when it can. */
export function profileProblem(wanted: string | undefined, offered: Record<string, string> | undefined): string | undefined {
  if (!wanted) return undefined;
  const names = Object.keys(offered ?? {});
  if (!names.length) return `the ACME server offers no profiles, so acme profile "${wanted}" cannot be asked for: remove it`;
  if (names.includes(wanted)) return undefined;
  const list = names
    .sort()
    .map((n) => (offered![n] ? `${n} (${offered![n]!.slice(0, 80)})` : n))
    .join(', ');
  return `the ACME server offers no profile "${wanted}"; it offers: ${list}`;
}
