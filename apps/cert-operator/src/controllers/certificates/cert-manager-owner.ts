import { defineKind, type KubeObject, type ReconcileContext } from '@opkit/runtime';
import type { CertificateObject } from '../../api/v1/certificate.js';
import { API_GROUPS, CERT_MANAGER_GROUP } from '../../api/groups.js';
import type { SecretObject } from '../../secrets/secret-reader.js';

/** cert-manager's own Certificate (cert-manager.io/v1), read only to know whether it holds a Secret. */
interface CertManagerCertificate extends KubeObject {
  spec?: { secretName?: string };
}
export const CertManagerCertificate = defineKind<CertManagerCertificate>({
  group: CERT_MANAGER_GROUP,
  version: 'v1',
  kind: 'Certificate',
  plural: 'certificates',
  namespaced: true,
});

/**
 * Set on a Certificate to take its Secret over from a cert-manager Certificate that still names it.
 * Only in opkit mode: in cert-manager mode the two are one resource, and this whole module is off.
 */
export const TAKEOVER_ANNOTATION = `${API_GROUPS.opkit.cert}/take-over-from-cert-manager`;

/**
 * How long an answer is kept for one version of a Secret, and how often a refused Certificate
 * looks again: deleting cert-manager's Certificate does not change the Secret, so nothing else
 * would tell. A minute: a migration's refused Certificates cost one GET each a minute.
 */
export const LOOK_AGAIN_MS = 60_000;

/** The cert-manager Certificate holding a Secret, and when the answer given is due to be asked again. */
export interface Holder {
  name: string;
  /** Until this answer expires: a refused Certificate looks again then, not a full LOOK_AGAIN_MS later. */
  lookAgainInMs: number;
}

/**
 * Answers which cert-manager Certificate holds a Secret, if one does: the Secret carries
 * cert-manager's `certificate-name` annotation (cert-manager writes it on every issuance) and that
 * cert-manager Certificate exists and names the Secret. With cert-manager running beside this
 * operator (a migration), two controllers issuing into one Secret re-issue over each other until
 * the CA's limits stop both.
 *
 * cert-manager's Certificates are not watched (their CRD may not exist), so this is one GET, asked
 * only when the Secret carries the annotation and does not hold what this operator issued, and
 * remembered per version of the Secret for a minute: a ported Secret costs at most a GET per
 * Certificate a minute, never one per reconcile. A cluster without cert-manager's CRDs
 * answers 404, as a missing Certificate does.
 *
 * The answer says how long it stays remembered, and a refusal looks again exactly then: the work
 * queue keeps the earliest of two delays asked for one item, so a refusal that asked a fixed minute
 * after an answer remembered from earlier in that minute would be served the remembered answer
 * again and wait a second minute (a takeover took up to two minutes, not the one documented).
 */
export class CertManagerOwners {
  private readonly seen = new Map<string, { resourceVersion: string; at: number; holder: string | undefined }>();

  async holder(c: CertificateObject, secret: SecretObject | undefined, ctx: Pick<ReconcileContext, 'client' | 'clock'>): Promise<Holder | undefined> {
    const name = secret?.metadata.annotations?.[`${CERT_MANAGER_GROUP}/certificate-name`];
    if (!secret || !name) return undefined;
    const key = `${c.metadata.namespace}/${c.spec.secretName}`;
    const rv = secret.metadata.resourceVersion ?? '';
    const now = ctx.clock.monotonic();
    let known = this.seen.get(key);
    if (!known || known.resourceVersion !== rv || now - known.at >= LOOK_AGAIN_MS) {
      const theirs = await ctx.client.find(CertManagerCertificate, { namespace: c.metadata.namespace, name });
      // Bounded by the Certificates this replica reconciles; a forgotten entry costs one more GET.
      if (this.seen.size > 10_000) this.seen.clear();
      known = { resourceVersion: rv, at: now, holder: theirs?.spec?.secretName === c.spec.secretName ? name : undefined };
      this.seen.set(key, known);
    }
    return known.holder === undefined ? undefined : { name: known.holder, lookAgainInMs: Math.max(1, known.at + LOOK_AGAIN_MS - now) };
  }
}
