import { createPrivateKey, createPublicKey, generateKeyPair, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { objectMemo, textMemo } from './parse-memo.js';

const generate = promisify(generateKeyPair);

export type KeyAlgorithm = 'RSA' | 'ECDSA' | 'Ed25519';
export type KeyEncoding = 'PKCS1' | 'PKCS8';

export interface KeySpec {
  algorithm: KeyAlgorithm;
  size: number;
  encoding: KeyEncoding;
}

const EC_SIZES = [256, 384, 521];

/** cert-manager's defaults: RSA 2048, ECDSA P-256, PKCS1; Ed25519 has no size. */
export function keySpecOf(pk: { algorithm?: string; size?: number; encoding?: string } | undefined): KeySpec {
  const algorithm = (pk?.algorithm ?? 'RSA') as KeyAlgorithm;
  const size = algorithm === 'Ed25519' ? 0 : (pk?.size ?? (algorithm === 'ECDSA' ? 256 : 2048));
  return { algorithm, size, encoding: algorithm === 'Ed25519' ? 'PKCS8' : ((pk?.encoding ?? 'PKCS1') as KeyEncoding) };
}

/**
 * The signature algorithm this operator signs with for a key (its CSR, and a SelfSigned
 * certificate), in cert-manager's names: SHA-256 for RSA and P-256, wider hashes for bigger curves
 * (as signingAlgorithm below).
 */
export function signatureAlgorithmFor(spec: KeySpec): string {
  if (spec.algorithm === 'Ed25519') return 'PureEd25519';
  if (spec.algorithm === 'ECDSA') return spec.size === 256 ? 'ECDSAWithSHA256' : spec.size === 384 ? 'ECDSAWithSHA384' : 'ECDSAWithSHA512';
  return 'SHA256WithRSA';
}

/** Why a key spec cannot be honoured, if it cannot. */
export function keySpecProblem(spec: KeySpec): string | undefined {
  // cert-manager's range: any size from 2048 to 8192 bits.
  if (spec.algorithm === 'RSA' && (spec.size < 2048 || spec.size > 8192)) return `RSA key size ${spec.size} is not supported: use a size from 2048 to 8192`;
  if (spec.algorithm === 'ECDSA' && !EC_SIZES.includes(spec.size)) return `ECDSA key size ${spec.size} is not supported: use 256, 384 or 521`;
  return undefined;
}

const curve = (size: number) => ({ 256: 'P-256', 384: 'P-384', 521: 'P-521' })[size as 256 | 384 | 521];

export async function generatePrivateKey(spec: KeySpec): Promise<KeyObject> {
  if (spec.algorithm === 'RSA') return (await generate('rsa', { modulusLength: spec.size })).privateKey;
  if (spec.algorithm === 'ECDSA') return (await generate('ec', { namedCurve: curve(spec.size)! })).privateKey;
  return (await generate('ed25519')).privateKey;
}

/** PEM in the requested encoding: PKCS#1 (RSA) or SEC 1 (ECDSA) for PKCS1, as cert-manager does. */
export function encodePrivateKey(key: KeyObject, encoding: KeyEncoding): string {
  if (encoding === 'PKCS1' && key.asymmetricKeyType === 'rsa') return key.export({ type: 'pkcs1', format: 'pem' }) as string;
  if (encoding === 'PKCS1' && key.asymmetricKeyType === 'ec') return key.export({ type: 'sec1', format: 'pem' }) as string;
  return key.export({ type: 'pkcs8', format: 'pem' }) as string;
}

/** A PEM private key, parsed once for the 1,024 keys read last (a CA's, and the Certificates' in flight). */
export const parsePrivateKey = textMemo(1_024, 16_384, (pem: string): KeyObject => createPrivateKey(pem));

/** The algorithm and size of a key, to compare with a Certificate's spec. */
export function describeKey(key: KeyObject): { algorithm: KeyAlgorithm; size: number } {
  const d = key.asymmetricKeyDetails ?? {};
  if (key.asymmetricKeyType === 'rsa') return { algorithm: 'RSA', size: d.modulusLength ?? 0 };
  if (key.asymmetricKeyType === 'ec') return { algorithm: 'ECDSA', size: { prime256v1: 256, secp384r1: 384, secp521r1: 521 }[d.namedCurve ?? ''] ?? 0 };
  if (key.asymmetricKeyType === 'ed25519') return { algorithm: 'Ed25519', size: 0 };
  throw new Error(`unsupported key type ${key.asymmetricKeyType}`);
}

/** `RSA 2048`, `ECDSA 256`, `Ed25519`: a key or key spec in messages. */
export const keyLabel = (k: { algorithm: string; size: number }): string => `${k.algorithm}${k.size ? ` ${k.size}` : ''}`;

export const keyMatchesSpec = (key: KeyObject, spec: KeySpec): boolean => {
  const d = describeKey(key);
  return d.algorithm === spec.algorithm && d.size === spec.size;
};

/**
 * The public key as SPKI DER, derived once per key: compares keys across certificates, CSRs and
 * private keys. Shared: read-only.
 */
export const publicKeyDer = objectMemo(
  (key: KeyObject): Buffer => (key.type === 'private' ? createPublicKey(key) : key).export({ type: 'spki', format: 'der' }) as Buffer,
);
