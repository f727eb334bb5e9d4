import { isIP } from 'node:net';
import { children, decodeOid, DerError, explicit, ia5, oid, readTlv, sequence, tlv, utf8String } from './der.js';
import { extension, type RawExtension } from './x509-write.js';

// The GeneralName forms written here (RFC 5280 §4.2.1.6), context-specific implicit tags.
const TAG = { otherName: 0xa0, rfc822Name: 0x81, dNSName: 0x82, uri: 0x86, iPAddress: 0x87 } as const;

export interface OtherName {
  oid: string;
  utf8Value: string;
}

export const OID_SAN = '2.5.29.17';
export const OID_NAME_CONSTRAINTS = '2.5.29.30';

const ipBytes = (ip: string): Buffer => {
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map(Number));
  const url = new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  const [head, tail = ''] = url.includes('::') ? url.split('::') : [url, undefined as never];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return Buffer.from(groups.flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 0xff]));
};

const otherName = (o: OtherName) => tlv(TAG.otherName, Buffer.concat([oid(o.oid), explicit(0, utf8String(o.utf8Value))]));

/** The subjectAltName extension: DNS names, IP addresses, URIs, email addresses, then otherNames. */
export function subjectAltName(
  id: { dnsNames: string[]; ipAddresses: string[]; uris: string[]; emailAddresses: string[]; otherNames: OtherName[] },
  critical: boolean,
): RawExtension {
  const names = sequence(
    ...id.dnsNames.map((d) => ia5(TAG.dNSName, d)),
    ...id.ipAddresses.map((ip) => tlv(TAG.iPAddress, ipBytes(ip))),
    ...id.uris.map((u) => ia5(TAG.uri, u)),
    ...id.emailAddresses.map((e) => ia5(TAG.rfc822Name, e)),
    ...id.otherNames.map(otherName),
  );
  return extension(OID_SAN, critical, names);
}

const ipString = (b: Buffer): string => {
  if (b.length === 4) return [...b].join('.');
  if (b.length !== 16) throw new DerError(`an iPAddress of ${b.length} bytes (4 or 16)`);
  const groups = Array.from({ length: 8 }, (_, i) => b.readUInt16BE(i * 2).toString(16));
  return new URL(`http://[${groups.join(':')}]/`).hostname.slice(1, -1);
};

/** Every name of a subjectAltName extension's value, otherNames included (UTF8String values); DerError when it does not parse. */
export function sanNames(sanValue: ArrayBuffer | Buffer): {
  dnsNames: string[];
  ipAddresses: string[];
  uris: string[];
  emailAddresses: string[];
  otherNames: OtherName[];
} {
  const out = { dnsNames: [] as string[], ipAddresses: [] as string[], uris: [] as string[], emailAddresses: [] as string[], otherNames: [] as OtherName[] };
  const names = readTlv(Buffer.from(sanValue as ArrayBuffer));
  if (names.tag !== 0x30) throw new DerError('a subjectAltName that is not a SEQUENCE of names');
  for (const n of children(names.content)) {
    if (n.tag === TAG.dNSName) out.dnsNames.push(n.content.toString('ascii'));
    else if (n.tag === TAG.iPAddress) out.ipAddresses.push(ipString(n.content));
    else if (n.tag === TAG.uri) out.uris.push(n.content.toString('ascii'));
    else if (n.tag === TAG.rfc822Name) out.emailAddresses.push(n.content.toString('ascii'));
    else if (n.tag === TAG.otherName) {
      // type-id OBJECT IDENTIFIER, value [0] EXPLICIT (a UTF8String, as cert-manager writes them)
      const [type, wrapped] = children(n.content);
      if (type?.tag !== 0x06 || wrapped?.tag !== 0xa0) throw new DerError('an otherName that is not an OBJECT IDENTIFIER and a [0] value');
      out.otherNames.push({ oid: decodeOid(type.content), utf8Value: readTlv(wrapped.content).content.toString('utf8') });
    }
  }
  return out;
}

/** The names of the subjectAltName among a certificate's or CSR's extensions (none without one). */
export function subjectAltNamesOf(extensions: readonly { type: string; value: Buffer }[]): ReturnType<typeof sanNames> {
  const san = extensions.find((e) => e.type === OID_SAN);
  return san ? sanNames(san.value) : { dnsNames: [], ipAddresses: [], uris: [], emailAddresses: [], otherNames: [] };
}

export interface NameConstraintsSpec {
  critical?: boolean;
  permitted?: Subtrees;
  excluded?: Subtrees;
}
interface Subtrees {
  dnsDomains?: string[];
  ipRanges?: string[];
  emailAddresses?: string[];
  uriDomains?: string[];
}

/** A CIDR as NameConstraints writes an address range: the address, then the mask. */
function cidrBytes(cidr: string): Buffer {
  const [addr = '', bits] = cidr.split('/');
  const a = ipBytes(addr);
  const n = Number(bits);
  const mask = Buffer.alloc(a.length);
  for (let i = 0; i < a.length; i++) {
    const bitsHere = Math.max(0, Math.min(8, n - i * 8));
    mask[i] = bitsHere ? (0xff << (8 - bitsHere)) & 0xff : 0;
  }
  return Buffer.concat([a, mask]);
}

const subtrees = (tag: number, s: Subtrees | undefined) => {
  const items = [
    ...(s?.dnsDomains ?? []).map((d) => ia5(TAG.dNSName, d)),
    ...(s?.ipRanges ?? []).map((r) => tlv(TAG.iPAddress, cidrBytes(r))),
    ...(s?.emailAddresses ?? []).map((e) => ia5(TAG.rfc822Name, e)),
    ...(s?.uriDomains ?? []).map((u) => ia5(TAG.uri, u)),
  ].map((base) => sequence(base));
  return items.length ? [tlv(tag, Buffer.concat(items))] : [];
};

/** What is wrong with a nameConstraints spec, or nothing. */
export function nameConstraintsProblems(nc: NameConstraintsSpec): string[] {
  const problems: string[] = [];
  for (const [which, s] of [
    ['permitted', nc.permitted],
    ['excluded', nc.excluded],
  ] as const) {
    for (const r of s?.ipRanges ?? []) {
      const [addr = '', bits] = r.split('/');
      const max = isIP(addr) === 4 ? 32 : isIP(addr) === 6 ? 128 : 0;
      if (!max || !/^\d+$/.test(bits ?? '') || Number(bits) > max) problems.push(`spec.nameConstraints.${which}.ipRanges: "${r}" is not a CIDR range`);
    }
  }
  if (!Object.values(nc.permitted ?? {}).some((v) => v?.length) && !Object.values(nc.excluded ?? {}).some((v) => v?.length))
    problems.push('spec.nameConstraints: name at least one permitted or excluded subtree');
  return problems;
}

/** The nameConstraints extension (RFC 5280 §4.2.1.10), for a CA certificate. */
export function nameConstraintsExtension(nc: NameConstraintsSpec): RawExtension {
  return extension(OID_NAME_CONSTRAINTS, !!nc.critical, sequence(...subtrees(0xa0, nc.permitted), ...subtrees(0xa1, nc.excluded)));
}
