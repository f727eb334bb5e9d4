import type { CertApi } from '../../api/index.js';
import { createHash, createHmac, X509Certificate } from 'node:crypto';
import type { CertificateObject } from '../../api/v1/certificate.js';
import { splitPem } from '../../pki/inspect.js';
import { keySpecOf, parsePrivateKey } from '../../pki/keys.js';
import { encodeJksKeystore, encodeJksTruststore } from '../../pki/keystores/jks.js';
import { encodePkcs12Keystore, encodePkcs12Truststore, type Pkcs12Profile } from '../../pki/keystores/pkcs12.js';
import { secretData, type SecretObject, type SecretReader } from '../../secrets/secret-reader.js';

export const OUTPUT_KEYS = ['key.der', 'tls-combined.pem', 'keystore.jks', 'truststore.jks', 'keystore.p12', 'truststore.p12'] as const;

export interface Pems {
  chainPem: string;
  keyPem: string;
  caPem?: string;
}

export type Outputs = { data: Record<string, string>; annotations: Record<string, string> } | { problem: { reason: string; message: string } };

const b64 = (b: Buffer | string) => Buffer.from(b).toString('base64');

/**
 * The keystore settings that shape the files, without the passwords: which stores, the alias, the
 * profile, where each password comes from.
 */
function keystoreShapeDigest(c: CertificateObject): string | undefined {
  const k = c.spec.keystores;
  if (!k?.jks?.create && !k?.pkcs12?.create) return undefined;
  const from = (x: { passwordSecretRef?: { name: string; key: string } }) => x.passwordSecretRef ?? 'literal';
  const shape = {
    jks: k.jks?.create ? { alias: k.jks.alias ?? 'certificate', password: from(k.jks) } : undefined,
    pkcs12: k.pkcs12?.create ? { profile: k.pkcs12.profile ?? 'LegacyDES', password: from(k.pkcs12) } : undefined,
  };
  return createHash('sha256').update(JSON.stringify(shape)).digest('hex').slice(0, 16);
}

/**
 * The passwords the keystores were written with, as a MAC keyed with the private key: a changed
 * password (a literal, or the value in its Secret) rebuilds the keystores, and the annotation tells
 * nothing about a password to whoever cannot read the key beside it.
 */
const passwordsMac = (keyPem: string, passwords: (string | undefined)[]) =>
  createHmac('sha256', keyPem).update(JSON.stringify(passwords)).digest('hex').slice(0, 16);

/** The Secret KEYSTORE_PASSWORD_INDEX maps to a Certificate: every Secret its keystore passwords come from. */
export const keystorePasswordSecrets = (c: CertificateObject): string[] => {
  const k = c.spec.keystores;
  return [...new Set([k?.jks?.create && k.jks.passwordSecretRef?.name, k?.pkcs12?.create && k.pkcs12.passwordSecretRef?.name].filter((n): n is string => !!n))];
};

async function password(c: CertificateObject, which: 'jks' | 'pkcs12', reader: SecretReader): Promise<string | { reason: string; message: string }> {
  const k = c.spec.keystores![which]!;
  if (k.password) return k.password;
  const ref = k.passwordSecretRef!;
  const secret = await reader.read({ namespace: c.metadata.namespace, name: ref.name });
  const value = secret && secretData(secret, ref.key);
  if (value === undefined) {
    return {
      reason: 'KeystorePasswordNotFound',
      message: secret
        ? `Secret "${ref.name}" has no key "${ref.key}" for the ${which.toUpperCase()} keystore password`
        : `Secret "${ref.name}" with the ${which.toUpperCase()} keystore password does not exist`,
    };
  }
  return value;
}

/**
 * What the Secret carries besides tls.crt, tls.key and ca.crt: cert-manager's additional output
 * formats and keystores. Keystores are salted, so they are re-encoded only when the certificate,
 * the key or their settings changed; otherwise the Secret's own bytes are kept, and a reconcile
 * that changes nothing writes nothing.
 */
export async function secretOutputs(
  api: CertApi,
  c: CertificateObject,
  pems: Pems,
  existing: SecretObject | undefined,
  reader: SecretReader,
  now: Date,
): Promise<Outputs> {
  const data: Record<string, string> = {};
  const annotations: Record<string, string> = {};
  const formats = new Set((c.spec.additionalOutputFormats ?? []).map((f) => f.type));
  const key = parsePrivateKey(pems.keyPem);
  if (formats.has('DER')) {
    const encoding = keySpecOf(c.spec.privateKey).encoding;
    const der =
      encoding === 'PKCS8' || key.asymmetricKeyType === 'ed25519'
        ? key.export({ type: 'pkcs8', format: 'der' })
        : key.export({ type: key.asymmetricKeyType === 'ec' ? 'sec1' : 'pkcs1', format: 'der' });
    data['key.der'] = b64(der);
  }
  if (formats.has('CombinedPEM')) data['tls-combined.pem'] = b64(`${pems.keyPem.trimEnd()}\n${pems.chainPem.trimEnd()}\n`);

  const shape = keystoreShapeDigest(c);
  if (!shape) return { data, annotations };
  const k = c.spec.keystores!;
  const wanted = [
    ...(k.jks?.create ? ['keystore.jks', ...(pems.caPem ? ['truststore.jks'] : [])] : []),
    ...(k.pkcs12?.create ? ['keystore.p12', ...(pems.caPem ? ['truststore.p12'] : [])] : []),
  ];
  const recorded = existing?.metadata.annotations?.[api.A.keystoreSpec];
  const samePair =
    secretData(existing, 'tls.crt') === pems.chainPem &&
    secretData(existing, 'tls.key') === pems.keyPem &&
    (secretData(existing, 'ca.crt') ?? '') === (pems.caPem ?? '') &&
    wanted.every((w) => existing?.data?.[w]);
  const keep = (digest: string): Outputs => {
    for (const w of wanted) data[w] = existing!.data![w]!;
    annotations[api.A.keystoreSpec] = digest;
    return { data, annotations };
  };
  const jksPw = k.jks?.create ? await password(c, 'jks', reader) : undefined;
  const p12Pw = k.pkcs12?.create ? await password(c, 'pkcs12', reader) : undefined;
  const missing = typeof jksPw === 'object' ? jksPw : typeof p12Pw === 'object' ? p12Pw : undefined;
  if (missing) {
    // The password cannot be read now (its Secret deleted or being replaced): keystores already
    // written for this pair and these settings stay; anything else waits for it, said on the Certificate.
    if (samePair && recorded?.split('.')[0] === shape) return keep(recorded);
    return { problem: missing };
  }
  const pw = { jks: typeof jksPw === 'string' ? jksPw : undefined, pkcs12: typeof p12Pw === 'string' ? p12Pw : undefined };
  const digest = `${shape}.${passwordsMac(pems.keyPem, [pw.jks, pw.pkcs12])}`;
  annotations[api.A.keystoreSpec] = digest;
  if (samePair && recorded === digest) return keep(digest);
  const chain = splitPem(pems.chainPem).map((p) => new X509Certificate(p));
  const ca = pems.caPem ? splitPem(pems.caPem).map((p) => new X509Certificate(p)) : [];
  if (k.jks?.create && pw.jks !== undefined) {
    data['keystore.jks'] = b64(encodeJksKeystore({ key, chain, ca: ca[0], password: pw.jks, alias: k.jks.alias, created: now }));
    if (ca[0]) data['truststore.jks'] = b64(encodeJksTruststore({ ca: ca[0], password: pw.jks, created: now }));
  }
  if (k.pkcs12?.create && pw.pkcs12 !== undefined) {
    const profile = (k.pkcs12.profile ?? 'LegacyDES') as Pkcs12Profile;
    data['keystore.p12'] = b64(encodePkcs12Keystore({ key, chain, ca, password: pw.pkcs12, profile }));
    if (ca.length) data['truststore.p12'] = b64(encodePkcs12Truststore({ ca, password: pw.pkcs12, profile }));
  }
  return { data, annotations };
}
