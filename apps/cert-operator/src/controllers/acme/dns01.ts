import type { ChallengeObject } from '../../api/acme/v1/challenge.js';
import { challengeRecordName, findZone, recursiveServers, authoritativeServers, txtPropagated } from '../../dns/resolve.js';
import { cleanupTxt, presentTxt, type Rfc2136 } from '../../dns/rfc2136.js';
import type { TsigAlgorithm } from '../../dns/tsig.js';
import { DnsError } from '../../dns/client.js';
import type { ReconcileContext } from '@opkit/runtime';
import { callWebhookSolver, challengeRequest } from '../../dns/webhook-solver.js';
import type { ResolvedIssuer } from '../../issuers/resolve.js';
import { secretData, type SecretReader } from '../../secrets/secret-reader.js';

/** How DNS-01 records are found and checked (cert-manager's --dns01-recursive-nameservers[-only]). */
export interface Dns01Settings {
  /** Resolvers for zone lookups and, with recursiveOnly, the self-check; empty: the system's. */
  recursiveNameservers: string[];
  /** Check propagation with the recursive nameservers only, not with the zone's authoritative servers. */
  recursiveOnly: boolean;
}

/** Where a challenge's TXT record goes: the record's name and its zone, both without the final dot. */
async function locate(ch: ChallengeObject, s: Dns01Settings): Promise<{ zone: string; name: string }> {
  const servers = recursiveServers(s.recursiveNameservers);
  const name = await challengeRecordName(ch.spec.dnsName, ch.spec.solver.dns01!.cnameStrategy === 'Follow', servers);
  return { name, zone: await findZone(name, servers) };
}

/** The RFC 2136 server and key an issuer names, its TSIG secret read from the issuer's resource namespace. */
async function rfc2136Provider(ch: ChallengeObject, reader: SecretReader, resourceNamespace: string): Promise<Rfc2136> {
  const r = ch.spec.solver.dns01!.rfc2136!;
  let tsig: Rfc2136['tsig'];
  if (r.tsigKeyName && r.tsigSecretSecretRef) {
    const ref = r.tsigSecretSecretRef;
    const secret = await reader.read({ namespace: resourceNamespace, name: ref.name });
    const value = secretData(secret, ref.key!);
    if (value === undefined) throw new DnsError(`the TSIG secret ${resourceNamespace}/${ref.name}${secret ? ` has no key "${ref.key}"` : ' does not exist'}`);
    tsig = { name: r.tsigKeyName, algorithm: (r.tsigAlgorithm ?? 'HMACMD5') as TsigAlgorithm, secret: value.trim() };
  }
  return { nameserver: r.nameserver, tsig };
}

/**
 * Adds the challenge's TXT value (`Present`, idempotent) or removes just that value (`CleanUp`):
 * through RFC 2136, or through the issuer's DNS webhook solver. Returns where the record is, for
 * the event.
 */
export async function changeDns01Record(
  action: 'Present' | 'CleanUp',
  ch: ChallengeObject,
  reader: SecretReader,
  ctx: Pick<ReconcileContext, 'call'>,
  issuer: Pick<ResolvedIssuer, 'kind' | 'resourceNamespace'>,
  s: Dns01Settings,
): Promise<string> {
  const { zone, name } = await locate(ch, s);
  const hook = ch.spec.solver.dns01!.webhook;
  if (hook) await callWebhookSolver(ctx, hook, challengeRequest(ch, action, name, zone, issuer));
  else {
    const provider = await rfc2136Provider(ch, reader, issuer.resourceNamespace);
    await (action === 'Present' ? presentTxt : cleanupTxt)(provider, zone, name, ch.spec.key);
  }
  return `${name} in zone ${zone}${hook ? ` (by the webhook solver ${hook.solverName}.${hook.groupName})` : ''}`;
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
