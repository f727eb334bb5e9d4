import { fuzzTargets, refusesWith } from '@opkit/testing/fuzz';
import fc from 'fast-check';
import { generateKeyPairSync } from 'node:crypto';
import { readSecretState } from '../controllers/certificates/secret-state.js';
import { createCSR, CsrError, parseCSR } from './csr.js';
import { children, DerError, readTlv } from './der.js';
import { sanNames, subjectAltName } from './general-names.js';
import { encodePrivateKey } from './keys.js';
import { selfSign } from './sign.js';
import { pemBlock, readCertificate } from './x509-read.js';

// Bytes a tenant writes (a CertificateRequest's CSR) or another writer leaves in a Secret (a
// certificate and key): parsed by the operator for everyone. Each gives a result or a typed
// refusal, soon, in bounded memory; the Secret reader never throws at all.

const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
const spec = {
  dnsNames: ['a.example.com', 'b.example.com'],
  ipAddresses: ['10.0.0.1', 'fd00::1'],
  uris: ['spiffe://example/x'],
  emailAddresses: ['a@example.com'],
  otherNames: [{ oid: '1.3.6.1.4.1.311.20.2.3', utf8Value: 'upn@example.com' }],
  commonName: 'a.example.com',
};
const validCsr = await createCSR(spec as never, key);
const validCert = (
  await selfSign({ csr: await parseCSR(validCsr), durationMs: 86_400_000, isCA: false, usages: ['digital signature', 'key encipherment'] } as never, key)
).certificate;
const validSan = subjectAltName(spec, false).value;

/** Bytes damaged: changed, cut, or spliced with garbage. */
const damage = (valid: Buffer) =>
  fc
    .tuple(fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 6 }), fc.option(fc.nat()), fc.uint8Array({ maxLength: 32 }))
    .map(([flips, cut, tail]) => {
      const b = Buffer.from(valid);
      for (const [at, v] of flips) b[at % b.length] = v;
      return cut === null ? b : Buffer.concat([b.subarray(0, cut % (b.length + 1)), Buffer.from(tail)]);
    });
const bytes = (valid: Buffer) =>
  fc.oneof(
    damage(valid),
    fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
  );

/** A PEM block whose body is damaged DER (or not base64 at all). */
const pemOf = (label: string, der: Buffer) => `-----BEGIN ${label}-----\n${der.toString('base64').replace(/.{64}/g, '$&\n')}\n-----END ${label}-----\n`;
const derOfPem = (pem: string) => Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
const damagedPem = (label: string, valid: string) =>
  fc.oneof(
    bytes(derOfPem(valid)).map((d) => pemOf(label, d)),
    fc.string({ maxLength: 200 }),
    fc.constant(''),
  );

export const targets = fuzzTargets(
  {
    name: 'readTlv and children: TLVs or a DerError, for any bytes',
    arbitrary: bytes(derOfPem(validCsr)),
    run: (b: Buffer) => children(readTlv(b).content),
    expected: refusesWith(DerError),
  },
  {
    name: 'sanNames: the names or a DerError, for any subjectAltName',
    arbitrary: bytes(validSan),
    run: (b: Buffer) => sanNames(b),
    expected: refusesWith(DerError),
  },
  {
    name: 'pemBlock and readCertificate: the parts or a DerError, for any certificate PEM',
    arbitrary: damagedPem('CERTIFICATE', validCert),
    run: (pem: string) => readCertificate(pemBlock(pem, ['CERTIFICATE'])),
    expected: refusesWith(DerError),
  },
  {
    name: 'parseCSR: a parsed request or a CsrError, for any PEM a tenant sends',
    arbitrary: damagedPem('CERTIFICATE REQUEST', validCsr),
    run: (pem: string) => parseCSR(pem),
    expected: refusesWith(CsrError),
  },
  {
    name: 'readSecretState: a state (with its problem) for whatever a Secret holds, never a throw',
    arbitrary: fc.record({
      crt: damagedPem('CERTIFICATE', validCert),
      key: fc.oneof(damagedPem('PRIVATE KEY', encodePrivateKey(key, 'PKCS8')), fc.constant(encodePrivateKey(key, 'PKCS8'))),
    }),
    run: ({ crt, key: keyPem }: { crt: string; key: string }) =>
      readSecretState({
        metadata: { name: 's', namespace: 'n' },
        data: { 'tls.crt': Buffer.from(crt).toString('base64'), 'tls.key': Buffer.from(keyPem).toString('base64') },
      } as never),
  },
);
