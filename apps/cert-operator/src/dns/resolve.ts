import { getServers } from 'node:dns';
import { DnsError, query } from './client.js';
import { canonical, TYPE } from './message.js';

/** Recursive nameservers: the given ones, else the system's (/etc/resolv.conf). */
export const recursiveServers = (given: string[]) =>
  given.length ? given : getServers().map((s) => (s.includes(':') && !s.startsWith('[') ? `[${s}]:53` : s));

const ask = async <T>(servers: string[], fn: (server: string) => Promise<T>): Promise<T> => {
  let last: unknown;
  for (const s of servers) {
    try {
      return await fn(s);
    } catch (err) {
      last = err;
    }
  }
  throw last instanceof DnsError ? last : new DnsError(last instanceof Error ? last.message : `no DNS server answered: ${servers.join(', ')}`);
};

/**
 * The zone a name lives in: the owner of the SOA record that answers for it (in the answer, or in
 * the authority section of a negative answer), as cert-manager's FindZoneByFqdn.
 */
export async function findZone(fqdn: string, servers: string[]): Promise<string> {
  const labels = canonical(fqdn).split('.');
  for (let i = 0; i < labels.length; i++) {
    const name = labels.slice(i).join('.');
    const res = await ask(servers, (s) => query(s, name, TYPE.SOA));
    const soa = [...res.answers, ...res.authorities].find((r) => r.type === TYPE.SOA);
    if (soa) return canonical(soa.name);
  }
  throw new DnsError(`no zone found for ${fqdn}: no SOA record answers for it or any parent (asked ${servers.join(', ')})`);
}

/** Where the TXT record goes: _acme-challenge.<name>, or with cnameStrategy Follow, the end of its CNAME chain. */
export async function challengeRecordName(dnsName: string, follow: boolean, servers: string[]): Promise<string> {
  let name = `_acme-challenge.${canonical(dnsName)}`;
  if (!follow) return name;
  for (let hops = 0; hops < 10; hops++) {
    const res = await ask(servers, (s) => query(s, name, TYPE.CNAME));
    const cname = res.answers.find((r) => r.type === TYPE.CNAME && canonical(r.name) === name);
    if (!cname) return name;
    name = canonical(cname.value as string);
  }
  throw new DnsError(`CNAME chain from _acme-challenge.${dnsName} is longer than 10`);
}

/**
 * How many of a zone's nameservers the self-check asks, and how many addresses. Real zones name 2
 * to 6 (Route 53 4, Cloud DNS 4, Cloudflare 2); a tenant's zone can name hundreds.
 */
export const MAX_NAMESERVERS = 8;
const MAX_ADDRESSES = 16;

/**
 * The addresses (host:53) of a zone's authoritative servers, resolved through the recursive ones.
 * What the zone says is the tenant's: at most MAX_NAMESERVERS names, resolved at once, so a zone
 * naming hundreds that never resolve costs one query timeout, not one per name.
 */
export async function authoritativeServers(zone: string, servers: string[]): Promise<string[]> {
  const ns = (await ask(servers, (s) => query(s, zone, TYPE.NS))).answers.filter((r) => r.type === TYPE.NS).map((r) => r.value as string);
  const asked = [...new Set(ns)].sort().slice(0, MAX_NAMESERVERS);
  const resolved = await Promise.all(
    asked.map((host) =>
      ask(servers, (s) => query(s, host, TYPE.A)).then(
        (res) => res.answers.filter((r) => r.type === TYPE.A).map((r) => `${r.value}:53`),
        () => [],
      ),
    ),
  );
  const out = [...new Set(resolved.flat())].slice(0, MAX_ADDRESSES);
  if (!out.length) throw new DnsError(`zone ${zone} has no authoritative servers with an address (asked for ${asked.length} of its ${ns.length} nameservers)`);
  return out;
}

/**
 * The DNS-01 self-check: every server asked must answer the TXT record with the value. Returns
 * what is missing, or nothing once it has propagated.
 */
export async function txtPropagated(name: string, value: string, servers: string[]): Promise<string | undefined> {
  // Asked at once: the check costs one query timeout however many servers there are.
  const verdicts = await Promise.all(
    servers.map(async (s) => {
      let values: string[];
      try {
        values = (await query(s, name, TYPE.TXT)).answers
          .filter((r) => r.type === TYPE.TXT && canonical(r.name) === canonical(name))
          .map((r) => (r.value as string[]).join(''));
      } catch (err) {
        return `${s} did not answer for ${name} TXT: ${(err as Error).message}`;
      }
      if (!values.includes(value))
        return `${s} does not have the TXT record ${name} "${value}" yet${values.length ? ` (it has ${values.length} other${values.length > 1 ? 's' : ''})` : ''}`;
      return undefined;
    }),
  );
  return verdicts.find((v) => v !== undefined);
}
