import type { ChallengeObject } from '../../api/acme/v1/challenge.js';
import { challengeRecordName, findZone, recursiveServers, authoritativeServers, txtPropagated } from '../../dns/resolve.js';
import { cleanupTxt, presentTxt, type Rfc2136 } from '../../dns/rfc2136.js';
import type { TsigAlgorithm } from '../../dns/tsig.js';
import { DnsError } from '../../dns/client.js';
import { secretData, type SecretReader } from '../../secrets/secret-reader.js';

/** How DNS-01 records are found and checked (cert-manager's --dns01-recursive-nameservers[-only]). */
export interface Dns01Settings {
  /** Resolvers for zone lookups and, with recursiveOnly, the self-check; empty: the system's. */
  recursiveNameservers: string[];
  /** Check propagation with the recursive nameservers only, not with the zone's authoritative servers. */
  recursiveOnly: boolean;
}

interface Target {
  zone: string;
  name: string;
  provider: Rfc2136;
}

/** Where the challenge's TXT record goes and how to write it: the zone, the record name, the RFC 2136 server and key. */
async function target(ch: ChallengeObject, reader: SecretReader, resourceNamespace: string, s: Dns01Settings): Promise<Target> {
  const dns01 = ch.spec.solver.dns01!;
  const r = dns01.rfc2136!;
  const servers = recursiveServers(s.recursiveNameservers);
  const name = await challengeRecordName(ch.spec.dnsName, dns01.cnameStrategy === 'Follow', servers);
  const zone = await findZone(name, servers);
  let tsig: Rfc2136['tsig'];
  if (r.tsigKeyName && r.tsigSecretSecretRef) {
    const ref = r.tsigSecretSecretRef;
    const secret = await reader.read({ namespace: resourceNamespace, name: ref.name });
    const value = secretData(secret, ref.key!);
    if (value === undefined) throw new DnsError(`the TSIG secret ${resourceNamespace}/${ref.name}${secret ? ` has no key "${ref.key}"` : ' does not exist'}`);
    tsig = { name: r.tsigKeyName, algorithm: (r.tsigAlgorithm ?? 'HMACMD5') as TsigAlgorithm, secret: value.trim() };
  }
  return { zone, name, provider: { nameserver: r.nameserver, tsig } };
}

/** Adds the challenge's TXT record (idempotent). Returns where it went, for the event. */
export async function presentDns01(ch: ChallengeObject, reader: SecretReader, resourceNamespace: string, s: Dns01Settings): Promise<string> {
  const t = await target(ch, reader, resourceNamespace, s);
  await presentTxt(t.provider, t.zone, t.name, ch.spec.key);
  return `${t.name} in zone ${t.zone}`;
}

/** Removes just this challenge's TXT value. */
export async function cleanupDns01(ch: ChallengeObject, reader: SecretReader, resourceNamespace: string, s: Dns01Settings): Promise<void> {
  const t = await target(ch, reader, resourceNamespace, s);
  await cleanupTxt(t.provider, t.zone, t.name, ch.spec.key);
}

/** The DNS-01 self-check: the TXT record answered by every authoritative server (or the recursive ones). */
export async function checkDns01(ch: ChallengeObject, s: Dns01Settings): Promise<string | undefined> {
  try {
    const servers = recursiveServers(s.recursiveNameservers);
    const name = await challengeRecordName(ch.spec.dnsName, ch.spec.solver.dns01?.cnameStrategy === 'Follow', servers);
    const asked = s.recursiveOnly ? servers : await authoritativeServers(await findZone(name, servers), servers);
    return await txtPropagated(name, ch.spec.key, asked);
  } catch (err) {
    return (err as Error).message;
  }
}
