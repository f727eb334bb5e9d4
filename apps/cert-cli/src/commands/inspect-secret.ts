import { createPrivateKey, X509Certificate } from 'node:crypto';
import { CERTIFICATE_NAME_ANNOTATION } from '../api.js';
import { relative } from '../format.js';
import { optionalFields } from '../x509.js';

const PEM = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;
const decode = (v: string | undefined) => (v ? Buffer.from(v, 'base64').toString('utf8') : undefined);

const keyText = (x: X509Certificate) => {
  const d = x.publicKey.asymmetricKeyDetails ?? {};
  const t = x.publicKey.asymmetricKeyType;
  return t === 'rsa' ? `RSA ${d.modulusLength}` : t === 'ec' ? `ECDSA ${d.namedCurve}` : (t ?? '?');
};

function describe(x: X509Certificate, now: number, indent: string): string[] {
  const { subject, issuer, keyUsage } = optionalFields(x);
  const out = [
    `${indent}Subject:     ${(subject ?? '').replace(/\n/g, ', ') || '(empty)'}`,
    `${indent}Issuer:      ${(issuer ?? '').replace(/\n/g, ', ')}`,
    ...(x.subjectAltName ? [`${indent}SANs:        ${x.subjectAltName}`] : []),
    `${indent}Valid:       ${new Date(x.validFrom).toISOString()} to ${new Date(x.validTo).toISOString()} (expires ${relative(new Date(x.validTo).toISOString(), now)})`,
    `${indent}Key:         ${keyText(x)}${x.ca ? ', CA' : ''}`,
    ...(keyUsage?.length ? [`${indent}Ext. usages: ${keyUsage.join(', ')}`] : []),
    `${indent}Serial:      ${x.serialNumber}`,
    `${indent}SHA-256:     ${x.fingerprint256}`,
  ];
  return out;
}

/** `inspect secret`: what is in a TLS Secret, decoded: each certificate of the chain, whether the key fits, the CA. */
export function inspectSecret(
  secret: { metadata: { name?: string; namespace?: string; annotations?: Record<string, string> }; data?: Record<string, string> },
  now: number,
): string[] {
  const lines = [`Secret ${secret.metadata.namespace}/${secret.metadata.name}`];
  const owner = secret.metadata.annotations?.[CERTIFICATE_NAME_ANNOTATION] ?? secret.metadata.annotations?.['cert-manager.io/certificate-name'];
  if (owner) lines.push(`  Written for Certificate ${owner}`);
  const chainPem = decode(secret.data?.['tls.crt']);
  if (!chainPem) return [...lines, '  No tls.crt in this Secret.'];
  const chain = (chainPem.match(PEM) ?? []).map((p) => new X509Certificate(p));
  chain.forEach((x, i) => {
    lines.push(`  ${i === 0 ? 'Certificate' : `Chain ${i}`}:`);
    lines.push(...describe(x, now, '    '));
  });
  const keyPem = decode(secret.data?.['tls.key']);
  if (keyPem) {
    try {
      lines.push(`  Private key: ${chain[0]?.checkPrivateKey(createPrivateKey(keyPem)) ? 'matches the certificate' : 'does NOT match the certificate'}`);
    } catch (err) {
      lines.push(`  Private key: unreadable (${(err as Error).message})`);
    }
  }
  for (let i = 0; i < chain.length - 1; i++)
    if (!chain[i]!.verify(chain[i + 1]!.publicKey)) lines.push(`  Chain ${i} is not signed by chain ${i + 1}: the chain is out of order or broken`);
  const caPem = decode(secret.data?.['ca.crt']);
  if (caPem) {
    const ca = (caPem.match(PEM) ?? []).map((p) => new X509Certificate(p));
    lines.push(`  ca.crt: ${ca.map((x) => (optionalFields(x).subject ?? '').replace(/\n/g, ', ')).join('; ')}`);
    const top = chain.at(-1);
    if (top && ca.length)
      lines.push(
        `  The chain ${ca.some((x) => top.verify(x.publicKey) || top.fingerprint256 === x.fingerprint256) ? 'verifies' : 'does NOT verify'} against ca.crt`,
      );
  }
  const extra = Object.keys(secret.data ?? {}).filter((k) => !['tls.crt', 'tls.key', 'ca.crt'].includes(k));
  if (extra.length) lines.push(`  Also: ${extra.join(', ')}`);
  return lines;
}
