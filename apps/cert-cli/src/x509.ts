import type { X509Certificate } from 'node:crypto';

/**
 * The fields of Node's X509Certificate that a certificate may lack, typed as such. Node's types
 * say `subject`, `issuer` and `keyUsage` are always there; a certificate with an empty subject (a
 * CA may issue one with its names only in SANs) has `subject` undefined, and one without the
 * extended key usage extension has `keyUsage` undefined.
 */
export const optionalFields = (x: X509Certificate): { subject?: string; issuer?: string; keyUsage?: string[] } => ({
  subject: x.subject,
  issuer: x.issuer,
  keyUsage: x.keyUsage,
});
