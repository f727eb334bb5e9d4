import { mkdtempSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findBinary, versions } from '../assets/binaries.js';
import { buildToolset } from '../assets/build-toolset.js';
import { createCertificateAuthority } from '../pki/pki.js';
import { ManagedProcess } from '../process/managed-process.js';
import { moduleYamls } from './module-files.js';

/** The AWS Private CA issuer (github.com/cert-manager/aws-privateca-issuer), an external issuer of cert-manager's API. */
export interface AwsPrivateCaIssuerToolset {
  binary: string;
  /** Its two CRDs (AWSPCAIssuer, AWSPCAClusterIssuer, group awspca.cert-manager.io) as its module ships them. */
  crds: string;
}

/**
 * Builds the issuer once from its module (about 4 minutes on 2 cores, with progress lines; then
 * cached beside the control-plane binaries) and reads its CRDs from the module.
 */
export async function awsPrivateCaIssuerToolset(): Promise<AwsPrivateCaIssuerToolset> {
  await buildToolset(['--only', 'aws-privateca-issuer'], '[aws-privateca-issuer]');
  const crds = moduleYamls('aws-privateca-issuer', 'github.com/cert-manager/aws-privateca-issuer', versions.awsPrivateCaIssuer, 'config/crd/bases');
  return { binary: findBinary('aws-privateca-issuer'), crds };
}

/** One call the stand-in answered: the ACM PCA operation and, for IssueCertificate, the ARN it gave. */
export interface AwsPcaCall {
  operation: string;
  certificateArn?: string;
}

export interface AwsPcaStandIn {
  /** Where the issuer's AWS SDK is pointed (AWS_ENDPOINT_URL). */
  url: string;
  /** The one certificate authority it serves. */
  arn: string;
  /** Its CA certificate (PEM): what issued certificates chain to. */
  caPem: string;
  /** Every call, in order. */
  calls: AwsPcaCall[];
  stop(): Promise<void>;
}

/**
 * A stand-in for AWS Private CA's API, as Pebble stands in for an ACME CA: the three operations
 * the AWS Private CA issuer calls (DescribeCertificateAuthority, IssueCertificate, GetCertificate)
 * in AWS's JSON 1.1 protocol, signing with a CA of its own, and STS's GetCallerIdentity. IssueCertificate is idempotent by its
 * token, as AWS's. Signatures (SigV4) are not checked: any credentials do.
 */
export async function startAwsPcaStandIn(region = 'us-east-1'): Promise<AwsPcaStandIn> {
  const ca = await createCertificateAuthority('AWS Private CA stand-in', 365);
  const arn = `arn:aws:acm-pca:${region}:111122223333:certificate-authority/00000000-0000-4000-8000-000000000001`;
  const issued = new Map<string, string>();
  const byToken = new Map<string, string>();
  const calls: AwsPcaCall[] = [];
  let n = 0;

  const reply = (res: ServerResponse, status: number, body: object) => {
    res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': `req-${++n}` });
    res.end(JSON.stringify(body));
  };
  const refuse = (res: ServerResponse, type: string, message: string) => reply(res, 400, { __type: type, message });

  async function handle(operation: string, input: Record<string, unknown>, res: ServerResponse) {
    if (input['CertificateAuthorityArn'] !== arn)
      return refuse(res, 'ResourceNotFoundException', `Could not find certificate authority ${String(input['CertificateAuthorityArn'])}`);
    switch (operation) {
      case 'DescribeCertificateAuthority':
        calls.push({ operation });
        return reply(res, 200, {
          CertificateAuthority: {
            Arn: arn,
            Status: 'ACTIVE',
            Type: 'ROOT',
            CertificateAuthorityConfiguration: {
              KeyAlgorithm: 'EC_prime256v1',
              SigningAlgorithm: 'SHA256WITHECDSA',
              Subject: { CommonName: 'AWS Private CA stand-in' },
            },
          },
        });
      case 'IssueCertificate': {
        const token = String(input['IdempotencyToken'] ?? '');
        const again = token && byToken.get(token);
        if (again) {
          calls.push({ operation, certificateArn: again });
          return reply(res, 200, { CertificateArn: again });
        }
        const csrPem = Buffer.from(String(input['Csr'] ?? ''), 'base64').toString('utf8');
        const validity = input['Validity'] as { Type?: string; Value?: number } | undefined;
        const notBefore = input['ValidityNotBefore'] as { Type?: string; Value?: number } | undefined;
        if (validity?.Type !== 'ABSOLUTE' || typeof validity.Value !== 'number')
          return refuse(res, 'ValidationException', 'the stand-in takes ABSOLUTE validity only');
        let cert: string;
        try {
          cert = await ca.signRequest(csrPem, {
            notBefore: notBefore?.Type === 'ABSOLUTE' && typeof notBefore.Value === 'number' ? new Date(notBefore.Value * 1000) : new Date(),
            notAfter: new Date(validity.Value * 1000),
          });
        } catch (err) {
          return refuse(res, 'MalformedCSRException', (err as Error).message);
        }
        const certificateArn = `${arn}/certificate/${String(issued.size + 1).padStart(32, '0')}`;
        issued.set(certificateArn, cert);
        if (token) byToken.set(token, certificateArn);
        calls.push({ operation, certificateArn });
        return reply(res, 200, { CertificateArn: certificateArn });
      }
      case 'GetCertificate': {
        const certificateArn = String(input['CertificateArn'] ?? '');
        const cert = issued.get(certificateArn);
        calls.push({ operation, certificateArn });
        if (!cert) return refuse(res, 'ResourceNotFoundException', `Could not find certificate ${certificateArn}`);
        return reply(res, 200, { Certificate: cert.trim(), CertificateChain: ca.cert.trim() });
      }
      default:
        return refuse(res, 'UnknownOperationException', `the stand-in does not serve ${operation}`);
    }
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      const body = Buffer.concat(chunks).toString('utf8');
      // STS, which the issuer asks who it is at each issuer reconcile: its query protocol (form in,
      // XML out), or its JSON one.
      if (/(^|&)Action=GetCallerIdentity(&|$)/.test(body) || target.endsWith('.GetCallerIdentity')) {
        calls.push({ operation: 'GetCallerIdentity' });
        const who = { Account: '111122223333', Arn: 'arn:aws:iam::111122223333:user/stand-in', UserId: 'AIDASTANDIN' };
        if (target) return reply(res, 200, who);
        res.writeHead(200, { 'content-type': 'text/xml', 'x-amzn-requestid': `req-${++n}` });
        return res.end(
          `<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult>` +
            `<Arn>${who.Arn}</Arn><UserId>${who.UserId}</UserId><Account>${who.Account}</Account>` +
            `</GetCallerIdentityResult><ResponseMetadata><RequestId>req-${n}</RequestId></ResponseMetadata></GetCallerIdentityResponse>`,
        );
      }
      const [service, operation] = target.split('.');
      if (req.method !== 'POST' || service !== 'ACMPrivateCA' || !operation) return refuse(res, 'UnknownOperationException', `not an ACM PCA call: ${target}`);
      let input: Record<string, unknown>;
      try {
        input = JSON.parse(body || '{}') as Record<string, unknown>;
      } catch {
        return refuse(res, 'SerializationException', 'the body is not JSON');
      }
      handle(operation, input, res).catch((err: Error) => reply(res, 500, { __type: 'InternalFailure', message: err.message }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    arn,
    caPem: ca.cert,
    calls,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * Starts the AWS Private CA issuer as a process of its own, against `kubeconfigPath`, its AWS SDK
 * pointed at the stand-in (any credentials: the stand-in checks none). Logged to a file.
 */
export function startAwsPrivateCaIssuer(toolset: AwsPrivateCaIssuerToolset, opts: { kubeconfigPath: string; pca: AwsPcaStandIn }): ManagedProcess {
  const p = new ManagedProcess({
    name: 'aws-privateca-issuer',
    command: toolset.binary,
    args: [`--kubeconfig=${opts.kubeconfigPath}`, '--metrics-bind-address=0', '--health-probe-bind-address=0'],
    env: {
      ...process.env,
      AWS_ENDPOINT_URL: opts.pca.url,
      AWS_ACCESS_KEY_ID: 'AKIASTANDIN',
      AWS_SECRET_ACCESS_KEY: 'stand-in',
      AWS_EC2_METADATA_DISABLED: 'true',
      AWS_REGION: 'us-east-1',
    },
    logFile: join(mkdtempSync(join(tmpdir(), 'aws-privateca-issuer-')), 'issuer.log'),
  });
  p.start();
  return p;
}
