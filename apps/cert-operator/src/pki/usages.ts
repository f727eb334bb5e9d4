import type { KeyUsage } from '../api/v1/shared.js';
import { x509 } from './crypto-provider.js';

const F = x509.KeyUsageFlags;
const KEY_USAGE: Partial<Record<KeyUsage, number>> = {
  signing: F.digitalSignature,
  'digital signature': F.digitalSignature,
  'content commitment': F.nonRepudiation,
  'key encipherment': F.keyEncipherment,
  'key agreement': F.keyAgreement,
  'data encipherment': F.dataEncipherment,
  'cert sign': F.keyCertSign,
  'crl sign': F.cRLSign,
  'encipher only': F.encipherOnly,
  'decipher only': F.decipherOnly,
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

/** X.509 extensions for a set of usages: key usage flags (critical) and extended key usages. */
export function usageExtensions(usages: KeyUsage[]): x509.Extension[] {
  const flags = usages.reduce((f, u) => f | (KEY_USAGE[u] ?? 0), 0);
  const ekus = [...new Set(usages.map((u) => EXT_KEY_USAGE[u]).filter((o): o is string => !!o))];
  return [...(flags ? [new x509.KeyUsagesExtension(flags, true)] : []), ...(ekus.length ? [new x509.ExtendedKeyUsageExtension(ekus)] : [])];
}
