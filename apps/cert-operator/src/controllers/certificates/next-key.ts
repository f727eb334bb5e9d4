import type { CertApi } from '../../api/index.js';
import { CONTROLLER_INDEX, Secret, controllerReference, type ReconcileContext } from '@opkit/runtime';
import type { KeyObject } from 'node:crypto';
import type { CertificateObject } from '../../api/v1/certificate.js';
import { describeKey, encodePrivateKey, generatePrivateKey, keyLabel, keyMatchesSpec, keySpecOf, parsePrivateKey } from '../../pki/keys.js';
import { secretData } from '../../secrets/secret-reader.js';
import type { SecretState } from './secret-state.js';
import { certificateNameLabel } from './name-label.js';

export interface NextKey {
  key: KeyObject;
  /** The Secret holding it: a temporary one, or the target Secret itself (rotationPolicy Never). */
  secretName: string;
  temporary: boolean;
}

/**
 * The temporary key Secrets of a Certificate (normally at most one): the next-key Secrets of its
 * namespace it controls. By owner, not by our certificate-name label, which cert-manager's do not
 * carry (the key of an issuance it started and opkit took over in flight, named in
 * status.nextPrivateKeySecretName). Through the owner index: a scan of the namespace's next-key
 * Secrets made each reconcile cost O(certificates in flight), 10,000 issuances O(n²).
 */
export async function nextKeySecrets(api: CertApi, c: CertificateObject, ctx: ReconcileContext) {
  return ctx.cache.list(
    Secret,
    { namespace: c.metadata.namespace, labelSelector: { [api.L.nextPrivateKey]: 'true' }, index: { name: CONTROLLER_INDEX, value: c.metadata.uid! } },
    api.labelled,
  );
}

/** rotationPolicy Never, and the key in the Secret no longer fits the spec: a person has to decide. */
export interface KeyRefused {
  refused: string;
}

/**
 * The key manager: the private key the next certificate will carry, kept across retries in a
 * temporary Secret (so a failing issuance does not generate a key per attempt), or the current key
 * when rotationPolicy is Never. Never with a key that no longer fits the spec is refused, as
 * cert-manager does: making a new key is exactly what the user said not to do. Extra temporary
 * Secrets (from a lost race) are removed.
 */
export async function nextPrivateKey(api: CertApi, c: CertificateObject, current: SecretState, ctx: ReconcileContext): Promise<NextKey | KeyRefused> {
  const spec = keySpecOf(c.spec.privateKey);
  if (c.spec.privateKey?.rotationPolicy === 'Never' && current.key) {
    if (keyMatchesSpec(current.key, spec)) return { key: current.key, secretName: c.spec.secretName, temporary: false };
    return {
      refused:
        `the private key in Secret "${c.spec.secretName}" is ${keyLabel(describeKey(current.key))}, the spec asks for ${keyLabel(spec)}, ` +
        `and rotationPolicy is Never, so no new key is made: set spec.privateKey.rotationPolicy to Always, or delete the Secret's key`,
    };
  }
  const existing = (await nextKeySecrets(api, c, ctx)).sort((a, b) =>
    a.metadata.name === c.status?.nextPrivateKeySecretName ? -1 : b.metadata.name === c.status?.nextPrivateKeySecretName ? 1 : 0,
  );
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
      labels: { [api.L.fao]: 'true', [api.L.nextPrivateKey]: 'true', [api.L.certificateName]: certificateNameLabel(c.metadata.name) },
      ownerReferences: [controllerReference(api.Certificate.kind, c)],
    },
    type: 'Opaque',
    data: { 'tls.key': Buffer.from(encodePrivateKey(key, 'PKCS8')).toString('base64') },
  });
  ctx.recorder.normal(c, 'Generated', `Stored new private key in temporary Secret resource "${created.metadata.name}"`);
  return { key, secretName: created.metadata.name, temporary: true };
}
