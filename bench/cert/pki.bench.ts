// The cert operator's PKI work per certificate, in CPU-ms per operation: its own DER writer and
// reader signed and checked by Node's crypto (pki/x509-write.ts, pki/x509-read.ts), side by side
// with the x509 library over WebCrypto and asn1js, which did the same work until 2026-11-29.
// Rounds interleave the two; each figure is the median of the rounds.
//   OPKIT_BENCH_PKI_N=200      operations per round (within the operator's CSR memo of 256)
//   OPKIT_BENCH_PKI_ROUNDS=5   rounds
import { createPublicKey, webcrypto, type KeyObject } from 'node:crypto';
import { createCSR, parseCSR } from '../../apps/cert-operator/src/pki/csr.js';
import { x509 } from '../../apps/cert-operator/src/pki/crypto-provider.js';
import { inspectCertificate } from '../../apps/cert-operator/src/pki/inspect.js';
import { generatePrivateKey, keySpecOf } from '../../apps/cert-operator/src/pki/keys.js';
import { caSign, selfSign } from '../../apps/cert-operator/src/pki/sign.js';
import { median } from '../process-stats.js';
import { loadAverage, runBench, table } from '../report.js';

const N = Number(process.env.OPKIT_BENCH_PKI_N ?? 200);
const ROUNDS = Number(process.env.OPKIT_BENCH_PKI_ROUNDS ?? 5);
const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };

/** The library's way, as the operator did it: the key imported into WebCrypto (once per key). */
const libraryKeys = async (key: KeyObject) => ({
  privateKey: await webcrypto.subtle.importKey('pkcs8', key.export({ type: 'pkcs8', format: 'der' }), ALG, true, ['sign']),
  publicKey: await webcrypto.subtle.importKey('spki', createPublicKey(key).export({ type: 'spki', format: 'der' }), ALG, true, ['verify']),
});

async function main() {
  x509.cryptoProvider.set(webcrypto as never);
  const spec = keySpecOf({ algorithm: 'ECDSA', size: 256 });
  const caKey = await generatePrivateKey(spec);
  const ca = await selfSign(
    {
      csr: await parseCSR(await createCSR({ commonName: 'bench CA', isCA: true } as never, caKey)),
      durationMs: 365 * 86_400_000,
      isCA: true,
      usages: ['cert sign'],
    },
    caKey,
  );
  const caCert = new x509.X509Certificate(ca.certificate);
  const caCryptoKeys = await libraryKeys(caKey);
  const keys = await Promise.all(Array.from({ length: N }, () => generatePrivateKey(spec)));
  const specOf = (i: number) => ({ secretName: `c${i}`, issuerRef: { name: 'ca' }, dnsNames: [`c${i}.bench.example.com`] });

  const ops: Record<string, { ours: (i: number, r: number) => Promise<unknown>; library: (i: number, r: number) => Promise<unknown> }> = {};
  // Each round works on fresh texts (another round number in the names), so no memo answers.
  const csrs = new Map<string, string>();
  const parsed = new Map<string, x509.Pkcs10CertificateRequest>();
  const certs = new Map<string, string>();
  ops['write a CSR'] = {
    ours: async (i, r) => csrs.set(`ours ${r} ${i}`, await createCSR({ ...specOf(i), commonName: `r${r}` } as never, keys[i]!)),
    library: async (i, r) =>
      csrs.set(
        `library ${r} ${i}`,
        (
          await x509.Pkcs10CertificateRequestGenerator.create({
            name: `CN=r${r}`,
            keys: await libraryKeys(keys[i]!),
            signingAlgorithm: ALG,
            extensions: [
              new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: `c${i}.bench.example.com` }]),
              new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
            ],
          })
        ).toString('pem'),
      ),
  };
  ops['read and verify a CSR'] = {
    ours: (i, r) => parseCSR(csrs.get(`ours ${r} ${i}`)!),
    library: async (i, r) => {
      const csr = new x509.Pkcs10CertificateRequest(csrs.get(`library ${r} ${i}`)!);
      if (!(await csr.verify())) throw new Error('invalid');
      parsed.set(`library ${r} ${i}`, csr);
      return [csr.subjectName, csr.extensions];
    },
  };
  ops['sign under a CA'] = {
    ours: async (i, r) =>
      certs.set(
        `ours ${r} ${i}`,
        (
          await caSign(
            { csr: await parseCSR(csrs.get(`ours ${r} ${i}`)!), durationMs: 90 * 86_400_000, isCA: false, usages: ['digital signature', 'key encipherment'] },
            { chainPem: ca.certificate, key: caKey },
          )
        ).certificate,
      ),
    library: async (i, r) => {
      // Both sides sign from the request as read above (the operator's memo keeps the last 256).
      const csr = parsed.get(`library ${r} ${i}`)!;
      const now = new Date();
      const cert = await x509.X509CertificateGenerator.create({
        serialNumber: '7f01',
        subject: csr.subjectName,
        issuer: caCert.subjectName,
        notBefore: now,
        notAfter: new Date(now.getTime() + 90 * 86_400_000),
        publicKey: csr.publicKey,
        signingKey: caCryptoKeys.privateKey,
        signingAlgorithm: ALG,
        extensions: [
          new x509.BasicConstraintsExtension(false, undefined, true),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
          ...csr.extensions,
          await x509.SubjectKeyIdentifierExtension.create(csr.publicKey),
          await x509.AuthorityKeyIdentifierExtension.create(caCert),
        ],
      });
      certs.set(`library ${r} ${i}`, cert.toString('pem'));
    },
  };
  ops['read a certificate'] = {
    ours: async (i, r) => inspectCertificate(certs.get(`ours ${r} ${i}`)!),
    library: async (i, r) => {
      const c = new x509.X509Certificate(certs.get(`library ${r} ${i}`)!);
      return [c.subjectName.getField('2.5.4.3'), c.getExtension('2.5.29.17'), c.notAfter];
    },
  };

  const ms: Record<string, { ours: number[]; library: number[] }> = {};
  for (let r = 0; r < ROUNDS; r++) {
    for (const [op, sides] of Object.entries(ops)) {
      for (const side of ['ours', 'library'] as const) {
        const cpu0 = process.cpuUsage();
        for (let i = 0; i < N; i++) await sides[side](i, r);
        const cpu = process.cpuUsage(cpu0);
        (ms[op] ??= { ours: [], library: [] })[side].push((cpu.user + cpu.system) / 1000 / N);
      }
    }
  }
  table(
    Object.entries(ms).map(([op, m]) => ({
      'per certificate': op,
      'opkit CPU-ms': median(m.ours).toFixed(3),
      'x509 library CPU-ms': median(m.library).toFixed(3),
      ratio: (median(m.ours) / median(m.library)).toFixed(2),
    })),
  );
  console.log(`ECDSA P-256, ${N} operations × ${ROUNDS} rounds, medians; Node ${process.version}; load average ${loadAverage()}`);
}

runBench(main);
