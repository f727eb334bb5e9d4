import { Secret, controllerReference, type ReconcileContext } from '@opkit/runtime';
import type { KeyObject } from 'node:crypto';
import { Certificate, type CertificateObject } from '../../api/v1/certificate.js';
import { L } from '../../api/v1/shared.js';
import { encodePrivateKey, generatePrivateKey, keyMatchesSpec, keySpecOf, parsePrivateKey } from '../../pki/keys.js';
import { LABELLED, secretData } from '../../secrets/secret-reader.js';
import type { SecretState } from './trigger.js';

export interface NextKey {
  key: KeyObject;
  /** The Secret holding it: a temporary one, or the target Secret itself (rotationPolicy Never). */
  secretName: string;
  temporary: boolean;
}

/** The temporary key Secrets of a Certificate (normally at most one). */
export async function nextKeySecrets(c: CertificateObject, ctx: ReconcileContext) {
  return ctx.cache.list(Secret, { namespace: c.metadata.namespace, labelSelector: { [L.nextPrivateKey]: 'true', [L.certificateName]: c.metadata.name } }, LABELLED);
}

/**
 * The private key the next certificate will carry, kept across retries in a temporary Secret (so a
 * failing issuance does not generate a key per attempt), or the current key when rotationPolicy is
 * Never and it still fits the spec. Extra temporary Secrets (from a lost race) are removed.
 */
export async function nextPrivateKey(c: CertificateObject, current: SecretState, ctx: ReconcileContext): Promise<NextKey> {
  const spec = keySpecOf(c.spec.privateKey);
  if (c.spec.privateKey?.rotationPolicy === 'Never' && current.key && keyMatchesSpec(current.key, spec)) {
    return { key: current.key, secretName: c.spec.secretName, temporary: false };
  }
  const existing = (await nextKeySecrets(c, ctx)).sort((a, b) => (a.metadata.name === c.status?.nextPrivateKeySecretName ? -1 : b.metadata.name === c.status?.nextPrivateKeySecretName ? 1 : 0));
  let chosen: NextKey | undefined;
  for (const s of existing) {
    const pem = secretData(s, 'tls.key');
    let key: KeyObject | undefined;
    try {
      key = pem ? parsePrivateKey(pem) : undefined;
    } catch {
      key = undefined;
    }
    if (!chosen && key && keyMatchesSpec(key, spec)) chosen = { key, secretName: s.metadata.name, temporary: true };
    else await ctx.delete(Secret, s);
  }
  if (chosen) return chosen;
  const key = await generatePrivateKey(spec);
  const created = await ctx.create(Secret, {
    metadata: {
      generateName: `${c.metadata.name}-`,
      namespace: c.metadata.namespace,
      labels: { [L.fao]: 'true', [L.nextPrivateKey]: 'true', [L.certificateName]: c.metadata.name },
      ownerReferences: [controllerReference(Certificate.kind, c)],
    },
    type: 'Opaque',
    data: { 'tls.key': Buffer.from(encodePrivateKey(key, 'PKCS8')).toString('base64') },
  });
  ctx.recorder.normal(c, 'Generated', `Stored new private key in temporary Secret resource "${created.metadata.name}"`);
  return { key, secretName: created.metadata.name, temporary: true };
}
