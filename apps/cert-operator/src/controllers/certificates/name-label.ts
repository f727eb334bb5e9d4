import { createHash } from 'node:crypto';

const MAX_LABEL_VALUE = 63;
const HASH_CHARS = 16;

/**
 * The value of the certificate-name label on what a Certificate makes (its CertificateRequests, its
 * next-key Secret). A Certificate's name may be 253 characters; a label value only 63. A longer
 * name keeps its first characters, for people reading labels, and ends with 16 hex characters of
 * its SHA-256, so two long names sharing a prefix get different values. Readers also check owner
 * references, so a hash collision could not mix two Certificates' objects.
 */
export function certificateNameLabel(name: string): string {
  if (name.length <= MAX_LABEL_VALUE) return name;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, HASH_CHARS);
  return `${name.slice(0, MAX_LABEL_VALUE - HASH_CHARS - 1)}-${hash}`;
}
