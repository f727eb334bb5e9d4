import type { KeyUsage } from '../api/v1/shared.js';
import { bitString, oid, sequence } from './der.js';
import { extension, type RawExtension } from './x509-write.js';

/** KeyUsage's named bits (RFC 5280 §4.2.1.3): digitalSignature is bit 0. */
const KEY_USAGE_BIT: Partial<Record<KeyUsage, number>> = {
  signing: 0,
  'digital signature': 0,
  'content commitment': 1,
  'key encipherment': 2,
  'data encipherment': 3,
  'key agreement': 4,
  'cert sign': 5,
  'crl sign': 6,
  'encipher only': 7,
  'decipher only': 8,
};

export const EXT_KEY_USAGE: Partial<Record<KeyUsage, string>> = {
  any: '2.5.29.37.0',
  'server auth': '1.3.6.1.5.5.7.3.1',
  'client auth': '1.3.6.1.5.5.7.3.2',
  'code signing': '1.3.6.1.5.5.7.3.3',
  'email protection': '1.3.6.1.5.5.7.3.4',
  's/mime': '1.3.6.1.5.5.7.3.4',
  'ipsec end system': '1.3.6.1.5.5.7.3.5',
  'ipsec tunnel': '1.3.6.1.5.5.7.3.6',
  'ipsec user': '1.3.6.1.5.5.7.3.7',
  timestamping: '1.3.6.1.5.5.7.3.8',
  'ocsp signing': '1.3.6.1.5.5.7.3.9',
  'microsoft sgc': '1.3.6.1.4.1.311.10.3.3',
  'netscape sgc': '2.16.840.1.113730.4.1',
};

/** cert-manager's default usages, plus `cert sign` for a CA. */
export function effectiveUsages(usages: readonly KeyUsage[] | undefined, isCA: boolean | undefined): KeyUsage[] {
  const list: KeyUsage[] = usages?.length ? [...usages] : ['digital signature', 'key encipherment'];
  if (isCA && !list.includes('cert sign')) list.push('cert sign');
  return list;
}

/**
 * A named bit list in DER (X.690 §11.2.2): bit 0 is the first byte's high bit, and trailing zero
 * bits are left out.
 */
function namedBits(bits: number[]): Buffer {
  const highest = Math.max(...bits);
  const bytes = Buffer.alloc((highest >> 3) + 1);
  for (const b of bits) bytes[b >> 3]! |= 0x80 >> (b & 7);
  return bitString(bytes, 7 - (highest & 7));
}

/** X.509 extensions for a set of usages: key usage flags (critical) and extended key usages. */
export function usageExtensions(usages: KeyUsage[]): RawExtension[] {
  const bits = [...new Set(usages.map((u) => KEY_USAGE_BIT[u]).filter((b): b is number => b !== undefined))];
  const ekus = [...new Set(usages.map((u) => EXT_KEY_USAGE[u]).filter((o): o is string => !!o))];
  return [
    ...(bits.length ? [extension('2.5.29.15', true, namedBits(bits))] : []),
    ...(ekus.length ? [extension('2.5.29.37', false, sequence(...ekus.map(oid)))] : []),
  ];
}
