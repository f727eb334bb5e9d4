import type { KeyObject } from 'node:crypto';
import { certificateMatchesKey, inspectCertificate, type CertificateInfo } from '../../pki/inspect.js';
import { parsePrivateKey } from '../../pki/keys.js';
import { secretData, type SecretObject } from '../../secrets/secret-reader.js';

/** What the target Secret holds, parsed once per reconcile. */
export interface SecretState {
  secret?: SecretObject;
  certPem?: string;
  keyPem?: string;
  caPem?: string;
  cert?: CertificateInfo;
  key?: KeyObject;
  /** Why the data cannot be used, if it cannot. */
  problem?: { reason: string; message: string };
}

export function readSecretState(secret: SecretObject | undefined): SecretState {
  if (!secret) return { problem: { reason: 'DoesNotExist', message: 'Issuing certificate as Secret does not exist' } };
  const certPem = secretData(secret, 'tls.crt');
  const keyPem = secretData(secret, 'tls.key');
  const caPem = secretData(secret, 'ca.crt');
  const st: SecretState = { secret, certPem, keyPem, caPem };
  if (!certPem || !keyPem)
    return {
      ...st,
      problem: { reason: 'MissingData', message: `Issuing certificate as Secret does not contain ${!certPem ? 'a certificate' : 'a private key'}` },
    };
  try {
    st.key = parsePrivateKey(keyPem);
  } catch {
    return { ...st, problem: { reason: 'InvalidKeyPair', message: 'Issuing certificate as Secret contains an invalid private key' } };
  }
  try {
    st.cert = inspectCertificate(certPem);
  } catch {
    return { ...st, problem: { reason: 'InvalidCertificate', message: 'Issuing certificate as Secret contains an invalid certificate' } };
  }
  if (!certificateMatchesKey(certPem, st.key))
    return {
      ...st,
      problem: { reason: 'InvalidKeyPair', message: 'Issuing certificate as Secret contains a private key that does not match the certificate' },
    };
  return st;
}

/** The Secret exists but its data is not a usable pair: someone else wrote it (or broke it). */
export const isBroken = (st: SecretState): boolean =>
  !!st.secret && !!st.problem && ['InvalidKeyPair', 'InvalidCertificate', 'MissingData'].includes(st.problem.reason);

/** The data keys whose writer decides who holds the Secret. */
const PAIR_FIELDS = ['f:tls.crt', 'f:tls.key'];

interface ManagedFieldsEntry {
  manager?: string;
  fieldsV1?: unknown;
}

/**
 * The field managers other than ours that own the certificate or key in a Secret's data, from its
 * managedFields: the API server moves a field to whoever last changed it (a forced apply of ours
 * takes it back), so a manager listed here wrote the pair since our last write of it.
 */
export function pairWriters(managedFields: readonly ManagedFieldsEntry[] | undefined, ours: string): string[] {
  const writers = new Set<string>();
  for (const f of managedFields ?? []) {
    if (!f.manager || f.manager === ours) continue;
    const data = (f.fieldsV1 as { 'f:data'?: Record<string, unknown> } | undefined)?.['f:data'];
    if (data && PAIR_FIELDS.some((k) => k in data)) writers.add(f.manager);
  }
  return [...writers];
}
