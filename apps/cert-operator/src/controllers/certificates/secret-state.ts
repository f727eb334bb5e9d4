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
export const isOverwritten = (st: SecretState): boolean =>
  !!st.secret && !!st.problem && ['InvalidKeyPair', 'InvalidCertificate', 'MissingData'].includes(st.problem.reason);
