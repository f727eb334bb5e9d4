import type { KeyObject } from 'node:crypto';
import { parsePrivateKey } from '../pki/keys.js';
import { caKeyPairProblem } from '../pki/sign.js';
import { secretData, type SecretReader } from '../secrets/secret-reader.js';

export type CAKeyPair = { ok: true; chainPem: string; key: KeyObject } | { ok: false; reason: 'ErrGetKeyPair' | 'ErrInvalidKeyPair'; message: string };

/** The signing pair of a CA issuer, or why it cannot sign. */
export async function loadCAKeyPair(reader: SecretReader, namespace: string, secretName: string): Promise<CAKeyPair> {
  const secret = await reader.read({ namespace, name: secretName });
  if (!secret)
    return { ok: false, reason: 'ErrGetKeyPair', message: `Error getting keypair for CA issuer: secret "${secretName}" not found in namespace ${namespace}` };
  const chainPem = secretData(secret, 'tls.crt');
  const keyPem = secretData(secret, 'tls.key');
  let key: KeyObject | undefined;
  try {
    key = keyPem ? parsePrivateKey(keyPem) : undefined;
  } catch (err) {
    return {
      ok: false,
      reason: 'ErrInvalidKeyPair',
      message: `Error getting keypair for CA issuer: secret "${secretName}": its tls.key does not parse: ${(err as Error).message}`,
    };
  }
  const problem = caKeyPairProblem(chainPem, key);
  if (problem) return { ok: false, reason: 'ErrInvalidKeyPair', message: `Error getting keypair for CA issuer: secret "${secretName}": ${problem}` };
  return { ok: true, chainPem: chainPem!, key: key! };
}
