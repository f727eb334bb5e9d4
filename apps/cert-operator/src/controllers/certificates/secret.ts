import { controllerReference, Secret, type ObjectOf, type ReconcileContext } from '@opkit/runtime';
import type { CertificateObject } from '../../api/v1/certificate.js';
import type { CertOperatorConfig } from '../../config.js';
import { inspectCertificate } from '../../pki/inspect.js';
import type { SecretReader } from '../../secrets/secret-reader.js';
import { secretOutputs, type Pems } from './outputs.js';
import type { SecretState } from './secret-state.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

/**
 * The part of the target Secret this operator owns, for server-side apply: the data, our
 * annotations and label, and the secretTemplate. Labels and annotations other tools add are theirs
 * and survive; data someone else writes is repaired.
 */
export function desiredSecret(
  c: CertificateObject,
  data: { chainPem: string; keyPem: string; caPem?: string },
  cfg: CertOperatorConfig,
  existingType?: string,
  outputs: { data: Record<string, string>; annotations: Record<string, string> } = { data: {}, annotations: {} },
): ObjectOf<typeof Secret> {
  const { api } = cfg;
  const info = inspectCertificate(data.chainPem);
  const csv = (v: string[]) => v.join(',');
  const annotations: Record<string, string> = {
    ...c.spec.secretTemplate?.annotations,
    [api.A.certificateName]: c.metadata.name,
    [api.A.issuerName]: c.spec.issuerRef.name,
    [api.A.issuerKind]: c.spec.issuerRef.kind || 'Issuer',
    [api.A.issuerGroup]: c.spec.issuerRef.group || api.groups.cert,
    [api.A.commonName]: info.commonName ?? '',
    [api.A.altNames]: csv(info.dnsNames),
    [api.A.ipSans]: csv(info.ipAddresses),
    [api.A.uriSans]: csv(info.uris),
    ...(info.emailAddresses.length ? { [api.A.emailSans]: csv(info.emailAddresses) } : {}),
    ...(info.organizations.length ? { [api.A.subjectOrganizations]: csv(info.organizations) } : {}),
    ...outputs.annotations,
  };
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: c.spec.secretName,
      namespace: c.metadata.namespace,
      labels: { ...c.spec.secretTemplate?.labels, [api.L.fao]: 'true' },
      annotations,
      ...(cfg.certificateOwnerRef ? { ownerReferences: [{ ...controllerReference(api.Certificate.kind, c), blockOwnerDeletion: false }] } : {}),
    },
    // The type of an existing Secret is immutable; a new one is kubernetes.io/tls.
    type: existingType ?? 'kubernetes.io/tls',
    data: { 'tls.crt': b64(data.chainPem), 'tls.key': b64(data.keyPem), ...(data.caPem ? { 'ca.crt': b64(data.caPem) } : {}), ...outputs.data },
  };
}

/**
 * Writes the Secret: the pair, the CA, and the additional formats and keystores the spec asks for
 * (server-side apply: keys the spec no longer asks for go). A keystore password that cannot be
 * read is returned as the problem, and nothing is written. Else the Secret as written: the cache
 * shows it only later, and a reconcile that read it back from there would see what it just repaired.
 */
export async function applySecret(
  c: CertificateObject,
  pems: Pems,
  state: SecretState,
  ctx: ReconcileContext,
  cfg: CertOperatorConfig,
  reader: SecretReader,
): Promise<{ problem: { reason: string; message: string } } | { secret: ObjectOf<typeof Secret> }> {
  const outputs = await secretOutputs(cfg.api, c, pems, state.secret, reader, new Date(ctx.clock.now()));
  if ('problem' in outputs) return { problem: outputs.problem };
  const { obj } = await ctx.apply(Secret, desiredSecret(c, pems, cfg, state.secret?.type, outputs), state.secret);
  return { secret: obj };
}
