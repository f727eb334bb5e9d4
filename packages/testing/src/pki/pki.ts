import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { randomBytes, webcrypto } from 'node:crypto';

// Node 20 cannot mint X.509 certificates itself; @peculiar/x509 does it over WebCrypto, so the
// harness needs no openssl binary.
x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 24 * 60 * 60 * 1000;

export interface KeyPairPem {
  /** PEM certificate */
  cert: string;
  /** PKCS#8 PEM private key */
  key: string;
}

export interface CertificateAuthority extends KeyPairPem {
  issue(options: IssueOptions): Promise<KeyPairPem>;
  /**
   * Signs a PEM CSR as a CA service would: its subject, key and subject alternative names, server
   * and client usages, for the period given. Returns the PEM certificate.
   */
  signRequest(csrPem: string, validity: { notBefore: Date; notAfter: Date }): Promise<string>;
}

export interface IssueOptions {
  commonName: string;
  organizations?: string[];
  dnsNames?: string[];
  ipAddresses?: string[];
  usage: 'server' | 'client' | 'both';
  validDays?: number;
}

const pemKey = async (key: CryptoKey) => x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');

const serial = () =>
  randomBytes(16)
    .toString('hex')
    .replace(/^[89a-f]/, '1');

const subjectOf = (cn: string, orgs: string[] = []) => [...orgs.map((o) => `O=${o.replace(/([,+"\\<>;])/g, '\\$1')}`), `CN=${cn}`].join(', ');

/** A short-lived ECDSA P-256 CA for one control plane, like envtest's TinyCA. */
export async function createCertificateAuthority(commonName: string, validDays = 7): Promise<CertificateAuthority> {
  const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as CryptoKeyPair;
  const now = Date.now();
  const caCert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${commonName}`,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + validDays * DAY),
    keys,
    signingAlgorithm: alg,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const cert = caCert.toString('pem');
  const key = await pemKey(keys.privateKey);
  /** A leaf signed by this CA: the CA's side of every leaf, with the subject's own parts given. */
  const signLeaf = async (leaf: {
    subject: string;
    publicKey: CryptoKey | x509.PublicKey;
    notBefore: Date;
    notAfter: Date;
    ekus: string[];
    san?: x509.Extension;
  }) =>
    x509.X509CertificateGenerator.create({
      serialNumber: serial(),
      subject: leaf.subject,
      issuer: caCert.subject,
      notBefore: leaf.notBefore,
      notAfter: leaf.notAfter,
      publicKey: leaf.publicKey,
      signingKey: keys.privateKey,
      signingAlgorithm: alg,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
        new x509.ExtendedKeyUsageExtension(leaf.ekus),
        ...(leaf.san ? [leaf.san] : []),
        await x509.AuthorityKeyIdentifierExtension.create(caCert),
      ],
    });
  return {
    cert,
    key,
    async issue(o: IssueOptions): Promise<KeyPairPem> {
      const leafKeys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as CryptoKeyPair;
      const ekus =
        o.usage === 'server'
          ? [x509.ExtendedKeyUsage.serverAuth]
          : o.usage === 'client'
            ? [x509.ExtendedKeyUsage.clientAuth]
            : [x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth];
      const san = [
        ...(o.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
        ...(o.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
      ];
      const leaf = await signLeaf({
        subject: subjectOf(o.commonName, o.organizations),
        publicKey: leafKeys.publicKey,
        notBefore: new Date(Date.now() - 60_000),
        notAfter: new Date(Date.now() + (o.validDays ?? validDays) * DAY),
        ekus,
        ...(san.length ? { san: new x509.SubjectAlternativeNameExtension(san) } : {}),
      });
      return { cert: leaf.toString('pem'), key: await pemKey(leafKeys.privateKey) };
    },
    async signRequest(csrPem, { notBefore, notAfter }) {
      const csr = new x509.Pkcs10CertificateRequest(csrPem);
      if (!(await csr.verify())) throw new Error('the CSR signature does not verify');
      const san = csr.extensions.find((e) => e.type === '2.5.29.17'); // subjectAltName, as encoded
      const leaf = await signLeaf({
        subject: csr.subject,
        publicKey: csr.publicKey,
        notBefore,
        notAfter,
        ekus: [x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth],
        ...(san ? { san } : {}),
      });
      return leaf.toString('pem');
    },
  };
}
