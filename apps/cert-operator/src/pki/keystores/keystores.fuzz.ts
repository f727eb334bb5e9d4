import { fuzzTargets, refusesWith } from '@opkit/testing/fuzz';
import fc from 'fast-check';
import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import { parseCSR, createCSR } from '../csr.js';
import { selfSign } from '../sign.js';
import { encodeJksKeystore, encodeJksTruststore, KeystoreError } from './jks.js';
import { encodePkcs12Keystore, encodePkcs12Truststore } from './pkcs12.js';

// A Certificate's keystores take a password from a Secret and an alias from the Certificate's spec:
// what a tenant writes. Any of them gives a keystore or a KeystoreError, soon.

const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
const pem = (
  await selfSign(
    { csr: await parseCSR(await createCSR({ dnsNames: ['a.example.com'] } as never, key)), durationMs: 86_400_000, isCA: true, usages: ['cert sign'] } as never,
    key,
  )
).certificate;
const cert = new X509Certificate(pem);
const text = fc.oneof(
  fc.string({ maxLength: 64 }),
  fc.string({ unit: 'binary', maxLength: 64 }),
  fc.string({ unit: 'grapheme', maxLength: 16 }),
  fc.nat({ max: 70_000 }).map((n) => 'x'.repeat(n)),
);

export const targets = fuzzTargets(
  {
    name: 'JKS: a keystore or a KeystoreError, for any password and alias',
    arbitrary: fc.record({ password: text, alias: fc.option(text, { nil: undefined }) }),
    run: ({ password, alias }: { password: string; alias?: string }) => {
      encodeJksKeystore({ key, chain: [cert], ca: cert, password, alias, created: new Date(0) });
      encodeJksTruststore({ ca: cert, password, created: new Date(0) });
    },
    expected: refusesWith(KeystoreError),
  },
  {
    name: 'PKCS#12: a keystore, for any password',
    arbitrary: fc.record({ password: text, profile: fc.constantFrom('LegacyDES' as const, 'Modern2023' as const) }),
    run: ({ password, profile }: { password: string; profile: 'LegacyDES' | 'Modern2023' }) => {
      encodePkcs12Keystore({ key, chain: [cert], ca: [cert], password, profile });
      encodePkcs12Truststore({ ca: [cert], password, profile });
    },
    expected: refusesWith(KeystoreError),
  },
);
