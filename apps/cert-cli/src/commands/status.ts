import { CoreEvent, Secret, type Client, type KubeObject } from '@opkit/runtime';
import { X509Certificate } from 'node:crypto';
import {
  Certificate,
  CertificateRequest,
  Challenge,
  Order,
  REVISION_ANNOTATION,
  CERTIFICATE_NAME_ANNOTATION,
  type CertificateObject,
  type CertificateRequestObject,
  type ChallengeObject,
  type OrderObject,
} from '../api.js';
import { conditionLine, conditionOf, relative } from '../format.js';
import { optionalFields } from '../x509.js';

export interface Story {
  certificate: CertificateObject;
  secret?: KubeObject & { data?: Record<string, string> };
  request?: CertificateRequestObject;
  order?: OrderObject;
  challenges: ChallengeObject[];
  events: Map<string, { type?: string; reason?: string; message?: string; lastTimestamp?: string; count?: number }[]>;
}

const ownedBy = (o: KubeObject, owner: KubeObject) => o.metadata.ownerReferences?.some((r) => r.uid === owner.metadata.uid);

/** Everything that explains where a Certificate is: its Secret, its newest request, that request's Order and Challenges, and their recent events. */
export async function readStory(client: Client, namespace: string, name: string): Promise<Story> {
  const certificate = await client.get(Certificate, { namespace, name });
  const secret = await client.find(Secret, { namespace, name: certificate.spec.secretName });
  const requests = (await client.list(CertificateRequest, { namespace })).items.filter(
    (r) => r.metadata.annotations?.[CERTIFICATE_NAME_ANNOTATION] === name || ownedBy(r, certificate),
  );
  const request = requests.sort(
    (a, b) => Number(b.metadata.annotations?.[REVISION_ANNOTATION] ?? 0) - Number(a.metadata.annotations?.[REVISION_ANNOTATION] ?? 0),
  )[0];
  const order = request
    ? (await client.list(Order, { namespace }).catch(() => ({ items: [] as OrderObject[] }))).items.find((o) => ownedBy(o, request))
    : undefined;
  const challenges = order ? (await client.list(Challenge, { namespace })).items.filter((c) => ownedBy(c, order)) : [];
  const events = new Map<string, Story['events'] extends Map<string, infer V> ? V : never>();
  for (const o of [certificate, request, order, ...challenges].filter((x): x is NonNullable<typeof x> => !!x)) {
    const list = (await client.list(CoreEvent, { namespace, fieldSelector: `involvedObject.uid=${o.metadata.uid}` })).items;
    events.set(o.metadata.uid!, list.sort((a, b) => (a.lastTimestamp ?? '').localeCompare(b.lastTimestamp ?? '')) as never);
  }
  return { certificate, secret, request, order, challenges, events };
}

/**
 * Why a Certificate is where it is, in one sentence: the deepest thing that holds it up (a
 * Challenge's reason, then the Order's, the request's, the Certificate's own), or that it is fine.
 */
export function diagnose(s: Story): string {
  const ready = conditionOf(s.certificate, 'Ready');
  const issuing = conditionOf(s.certificate, 'Issuing');
  if (ready?.status === 'True' && issuing?.status !== 'True') return 'The certificate is up to date and has not expired.';
  const stuck = s.challenges.find((c) => c.status?.state !== 'valid' && c.status?.reason);
  if (stuck)
    return `The ${stuck.spec.type} challenge for ${stuck.spec.wildcard ? '*.' : ''}${stuck.spec.dnsName} is ${stuck.status?.state ?? 'pending'}: ${stuck.status?.reason}`;
  if (s.order?.status?.reason) return `The ACME order is ${s.order.status.state ?? 'pending'}: ${s.order.status.reason}`;
  const crReady = s.request && conditionOf(s.request, 'Ready');
  if (crReady && crReady.status !== 'True') return `CertificateRequest ${s.request!.metadata.name}: ${crReady.message ?? crReady.reason}`;
  if (s.request && conditionOf(s.request, 'Approved')?.status !== 'True' && conditionOf(s.request, 'Denied')?.status !== 'True')
    return `CertificateRequest ${s.request.metadata.name} waits for approval (opkit-cert approve ${s.request.metadata.name}).`;
  return ready?.message ?? issuing?.message ?? 'The Certificate has no conditions yet: is the cert operator running?';
}

/** The story as lines: one screen, the explanation last. */
export function renderStory(s: Story, now: number): string[] {
  const c = s.certificate;
  const ns = c.metadata.namespace;
  const lines: string[] = [];
  // Per object, its last two Warnings and its latest event: what went wrong, and what happened last.
  const events = (o: KubeObject | undefined, indent: string) => {
    const all = (o && s.events.get(o.metadata.uid!)) ?? [];
    const shown = [...new Set([...all.filter((e) => e.type === 'Warning').slice(-2), ...all.slice(-1)])];
    for (const e of shown)
      lines.push(`${indent}event ${relative(e.lastTimestamp, now)}: ${e.type} ${e.reason}: ${e.message}${(e.count ?? 1) > 1 ? ` (×${e.count})` : ''}`);
  };
  const names = [c.spec.commonName, ...(c.spec.dnsNames ?? []), ...(c.spec.ipAddresses ?? [])].filter(Boolean);
  lines.push(`Certificate ${ns}/${c.metadata.name}  issuer ${c.spec.issuerRef.kind ?? 'Issuer'}/${c.spec.issuerRef.name}  for ${names.join(', ')}`);
  for (const t of ['Ready', 'Issuing']) if (conditionOf(c, t)) lines.push(`  ${conditionLine(conditionOf(c, t))}`);
  const st = c.status ?? {};
  if (st.notAfter)
    lines.push(`  revision ${st.revision ?? '-'}: valid until ${st.notAfter} (${relative(st.notAfter, now)}), renews ${relative(st.renewalTime, now)}`);
  if (st.failedIssuanceAttempts) lines.push(`  ${st.failedIssuanceAttempts} failed issuance(s), the last ${relative(st.lastFailureTime, now)}`);
  const crt = s.secret?.data?.['tls.crt'];
  if (!s.secret) lines.push(`  Secret ${c.spec.secretName}: does not exist yet`);
  else if (crt) {
    try {
      const x = new X509Certificate(Buffer.from(crt, 'base64'));
      lines.push(
        `  Secret ${c.spec.secretName}: ${x.subjectAltName ?? optionalFields(x).subject ?? '(no names)'}, valid until ${new Date(x.validTo).toISOString()}`,
      );
    } catch {
      lines.push(`  Secret ${c.spec.secretName}: its tls.crt is not a certificate`);
    }
  } else lines.push(`  Secret ${c.spec.secretName}: no tls.crt`);
  events(c, '  ');
  if (s.request) {
    const r = s.request;
    lines.push(
      `CertificateRequest ${r.metadata.name}  ${['Approved', 'Denied']
        .map((t) => conditionOf(r, t))
        .filter(Boolean)
        .map((x) => `${x!.type}=${x!.status}`)
        .join(' ')}`,
    );
    lines.push(`  ${conditionLine(conditionOf(r, 'Ready'))}`);
    events(r, '  ');
  }
  if (s.order) {
    const o = s.order;
    lines.push(`Order ${o.metadata.name}  state ${o.status?.state ?? 'pending'}${o.status?.reason ? `: ${o.status.reason}` : ''}`);
    events(o, '  ');
  }
  for (const ch of s.challenges) {
    lines.push(
      `  Challenge ${ch.metadata.name}  ${ch.spec.type} ${ch.spec.wildcard ? '*.' : ''}${ch.spec.dnsName}  ${ch.status?.state ?? 'pending'}${ch.status?.presented ? `, presented ${relative(ch.status.presentedAt, now)}` : ''}`,
    );
    if (ch.status?.reason) lines.push(`    ${ch.status.reason}`);
    events(ch, '    ');
  }
  lines.push('', `Why: ${diagnose(s)}`);
  return lines;
}
