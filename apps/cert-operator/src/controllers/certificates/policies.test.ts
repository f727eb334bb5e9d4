import { API_GROUPS } from '../../api/groups.js';
import type { KeyObject } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CertificateObject, CertificateSpecType } from '../../api/v1/certificate.js';
import type { CertificateRequestObject } from '../../api/v1/certificaterequest.js';
import type { KeyUsage } from '../../api/v1/shared.js';
import { createCSR, parseCSR } from '../../pki/csr.js';
import { encodePrivateKey, generatePrivateKey, keySpecOf } from '../../pki/keys.js';
import { selfSign } from '../../pki/sign.js';
import { effectiveUsages } from '../../pki/usages.js';
import type { SecretObject } from '../../secrets/secret-reader.js';
import { issuanceReason, type TriggerInput } from './policies.js';
import { readSecretState } from './secret-state.js';

const HOUR = 3_600_000;
const ISSUED_AT = new Date('2026-11-01T00:00:00Z');
const b64 = (s: string) => Buffer.from(s).toString('base64');

const base: CertificateSpecType = {
  secretName: 'web',
  issuerRef: { name: 'ca' },
  dnsNames: ['web.example.com'],
  duration: '2160h',
  privateKey: { algorithm: 'ECDSA' },
};
const certificate = (spec: Partial<CertificateSpecType> = {}): CertificateObject => ({
  apiVersion: 'cert.opkit.dev/v1',
  kind: 'Certificate',
  metadata: { name: 'web', namespace: 'apps', generation: 1 },
  spec: { ...base, ...spec },
});

const annotations = (over: Record<string, string> = {}) => ({
  'cert.opkit.dev/certificate-name': 'web',
  'cert.opkit.dev/issuer-name': 'ca',
  'cert.opkit.dev/issuer-kind': 'Issuer',
  'cert.opkit.dev/issuer-group': 'cert.opkit.dev',
  ...over,
});

let ecKey: KeyObject;
let otherKey: KeyObject;
beforeAll(async () => {
  ecKey = await generatePrivateKey(keySpecOf({ algorithm: 'ECDSA' }));
  otherKey = await generatePrivateKey(keySpecOf({ algorithm: 'ECDSA' }));
});

/**
 * What a reconcile would read after issuing `requested` (the spec then) with `key`: the request,
 * and a Secret whose certificate the CA made from `issued` (what the CA chose to put in it).
 */
async function world(
  opts: {
    requested?: Partial<CertificateSpecType>;
    issued?: Partial<CertificateSpecType>;
    requestKey?: KeyObject;
    annotations?: Record<string, string>;
    request?: boolean;
    /** The request carries the certificate the Secret holds (it was issued and written by us). */
    issuedBy?: boolean;
    secret?: Partial<SecretObject> | null;
  } = {},
) {
  const requested = { ...base, ...opts.requested };
  const csrPem = await createCSR(requested, opts.requestKey ?? ecKey);
  const issuedCsr = await parseCSR(await createCSR({ ...requested, ...opts.issued }, ecKey));
  const usages = effectiveUsages(requested.usages as KeyUsage[] | undefined, requested.isCA);
  const signed = await selfSign({ csr: issuedCsr, durationMs: 90 * 24 * HOUR, isCA: !!requested.isCA, usages, now: ISSUED_AT }, ecKey);
  const cr: CertificateRequestObject = {
    apiVersion: 'cert.opkit.dev/v1',
    kind: 'CertificateRequest',
    metadata: { name: 'web-1', namespace: 'apps' },
    spec: { request: b64(csrPem), issuerRef: requested.issuerRef, duration: requested.duration, isCA: !!requested.isCA, usages },
    ...(opts.issuedBy ? { status: { certificate: b64(signed.certificate) } } : {}),
  };
  const secret: SecretObject | undefined =
    opts.secret === null
      ? undefined
      : {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'web', namespace: 'apps', annotations: opts.annotations ?? annotations() },
          type: 'kubernetes.io/tls',
          data: { 'tls.crt': b64(signed.certificate), 'tls.key': b64(encodePrivateKey(ecKey, 'PKCS8')) },
          ...opts.secret,
        };
  return { secret: readSecretState(secret), request: opts.request === false ? undefined : { cr, csr: await parseCSR(csrPem) } };
}

const at = (days: number) => new Date(ISSUED_AT.getTime() + days * 24 * HOUR);

type Row = [string, () => Promise<TriggerInput>, string | undefined];
const input = async (spec: Partial<CertificateSpecType>, w: Parameters<typeof world>[0] = {}, now = at(1)): Promise<TriggerInput> => ({
  groups: API_GROUPS.opkit,
  certificate: certificate(spec),
  now,
  ...(await world(w)),
});
/** As `input`, with the ACME server's renewal window (days after issuance) in the status, for the certificate the Secret holds or (stale) another. */
const withWindow = async (spec: Partial<CertificateSpecType>, window: [number, number], now: Date, stale = false): Promise<TriggerInput> => {
  const i = await input(spec, {}, now);
  const notAfter = stale ? at(30) : i.secret.cert!.notAfter;
  i.certificate.metadata.uid = 'c0ffee';
  i.certificate.status = {
    notAfter: notAfter.toISOString(),
    acme: { ari: { suggestedWindow: { start: at(window[0]).toISOString(), end: at(window[1]).toISOString() } } },
  };
  return i;
};

describe('the trigger policy chain', () => {
  const rows: Row[] = [
    // Up to date: no reason, including everything that used to loop.
    ['a fresh certificate', () => input({}), undefined],
    ["a CA that added a common name (Let's Encrypt's classic profile)", () => input({}, { issued: { commonName: 'web.example.com' } }), undefined],
    [
      'an IPv6 address spelled another way than the certificate prints it',
      () => input({ ipAddresses: ['2001:db8::1'] }, { requested: { ipAddresses: ['2001:DB8:0:0:0:0:0:1'] } }),
      undefined,
    ],
    [
      'isCA without cert sign among the usages',
      () => input({ isCA: true, usages: ['digital signature'] }, { requested: { isCA: true, usages: ['digital signature'] } }),
      undefined,
    ],
    ['usages: [] (the defaults)', () => input({ usages: [] }, { requested: { usages: [] } }), undefined],
    [
      'a Secret cert-manager wrote (its annotations)',
      () =>
        input(
          { issuerRef: { name: 'ca', group: 'cert-manager.io' } },
          {
            request: false,
            annotations: {
              'cert-manager.io/certificate-name': 'web',
              'cert-manager.io/issuer-name': 'ca',
              'cert-manager.io/issuer-kind': 'Issuer',
              'cert-manager.io/issuer-group': 'cert-manager.io',
            },
          },
        ),
      undefined,
    ],
    ['no request, a common name the CA added among the names', () => input({}, { request: false, issued: { commonName: 'web.example.com' } }), undefined],
    [
      'literalSubject, otherNames, usages not encoded',
      () => {
        const x = { literalSubject: 'CN=web.example.com,O=Example', otherNames: [{ oid: '1.2.3.4', utf8Value: 'v' }], encodeUsagesInRequest: false };
        return input(x, { requested: x });
      },
      undefined,
    ],
    [
      'a CA with nameConstraints',
      () => {
        const x = { isCA: true, nameConstraints: { permitted: { dnsDomains: ['example.com'] } } };
        return input(x, { requested: x });
      },
      undefined,
    ],
    [
      "another tool's issuer name on the Secret of the pair the request was issued (repaired, not re-issued)",
      () => input({}, { issuedBy: true, annotations: annotations({ 'cert.opkit.dev/issuer-name': 'argocd-was-here' }) }),
      undefined,
    ],
    [
      "another tool's certificate name on the Secret of the pair the request was issued",
      () => input({}, { issuedBy: true, annotations: annotations({ 'cert.opkit.dev/certificate-name': 'api' }) }),
      undefined,
    ],
    // One row per reason, in the chain's order.
    ['no Secret', () => input({}, { secret: null }), 'DoesNotExist'],
    ['no private key in the Secret', () => input({}, { secret: { data: { 'tls.crt': b64('x') } } }), 'MissingData'],
    ['a private key that does not parse', () => input({}, { secret: { data: { 'tls.crt': b64('x'), 'tls.key': b64('garbage') } } }), 'InvalidKeyPair'],
    ['another issuer', () => input({ issuerRef: { name: 'other-ca' } }), 'IncorrectIssuer'],
    ['a ClusterIssuer of the same name', () => input({ issuerRef: { name: 'ca', kind: 'ClusterIssuer' } }), 'IncorrectIssuer'],
    [
      "an external issuer's certificate, for the same external issuer: nothing to do (no re-issue loop)",
      () => {
        const step = { name: 'step', kind: 'StepClusterIssuer', group: 'certmanager.step.sm' };
        const ext = {
          'cert.opkit.dev/issuer-name': 'step',
          'cert.opkit.dev/issuer-kind': 'StepClusterIssuer',
          'cert.opkit.dev/issuer-group': 'certmanager.step.sm',
        };
        return input({ issuerRef: step }, { requested: { issuerRef: step }, annotations: annotations(ext) });
      },
      undefined,
    ],
    [
      'an external issuer of another group',
      () => {
        const step = { name: 'step', kind: 'StepClusterIssuer', group: 'certmanager.step.sm' };
        const ext = {
          'cert.opkit.dev/issuer-name': 'step',
          'cert.opkit.dev/issuer-kind': 'StepClusterIssuer',
          'cert.opkit.dev/issuer-group': 'other.example.com',
        };
        return input({ issuerRef: step }, { requested: { issuerRef: { ...step, group: 'other.example.com' } }, annotations: annotations(ext) });
      },
      'IncorrectIssuer',
    ],
    ["another Certificate's Secret", () => input({}, { annotations: annotations({ 'cert.opkit.dev/certificate-name': 'api' }) }), 'IncorrectCertificate'],
    [
      'the issuer changed in the spec, the pair the request was issued in the Secret',
      () => input({ issuerRef: { name: 'other-ca' } }, { issuedBy: true }),
      'RequestChanged',
    ],
    ['a private key of another algorithm', () => input({ privateKey: { algorithm: 'RSA' } }), 'PrivateKeyChanged'],
    ['a request for another key', () => input({}, { requestKey: otherKey }), 'SecretMismatch'],
    ['a DNS name added', () => input({ dnsNames: ['web.example.com', 'www.example.com'] }), 'RequestChanged'],
    ['a common name set', () => input({ commonName: 'web.example.com' }), 'RequestChanged'],
    ['an IP address changed', () => input({ ipAddresses: ['2001:db8::2'] }, { requested: { ipAddresses: ['2001:db8::1'] } }), 'RequestChanged'],
    ['a country added to the subject', () => input({ subject: { countries: ['DE'] } }), 'RequestChanged'],
    ['a street address added to the subject', () => input({ subject: { streetAddresses: ['Main 1'] } }), 'RequestChanged'],
    ['the subject serial number changed', () => input({ subject: { serialNumber: '2' } }, { requested: { subject: { serialNumber: '1' } } }), 'RequestChanged'],
    ['usages changed', () => input({ usages: ['server auth'] }), 'RequestChanged'],
    ['isCA set', () => input({ isCA: true }), 'RequestChanged'],
    [
      'literalSubject changed',
      () => input({ literalSubject: 'CN=web.example.com,O=Other' }, { requested: { literalSubject: 'CN=web.example.com,O=Example' } }),
      'RequestChanged',
    ],
    ['an otherName added', () => input({ otherNames: [{ oid: '1.2.3.4', utf8Value: 'v' }] }), 'RequestChanged'],
    [
      'nameConstraints changed',
      () =>
        input(
          { isCA: true, nameConstraints: { permitted: { dnsDomains: ['example.org'] } } },
          { requested: { isCA: true, nameConstraints: { permitted: { dnsDomains: ['example.com'] } } } },
        ),
      'RequestChanged',
    ],
    ['usages no longer to be encoded in the CSR', () => input({ encodeUsagesInRequest: false }), 'RequestChanged'],
    ['the duration changed', () => input({ duration: '720h' }), 'RequestChanged'],
    ['no request, and a name the certificate does not have', () => input({ dnsNames: ['api.example.com'] }, { request: false }), 'SpecChanged'],
    ['no request, and a common name outside the names', () => input({}, { request: false, issued: { commonName: 'Someone Else' } }), 'SpecChanged'],
    ['expired', () => input({}, {}, at(91)), 'Expired'],
    ['past the renewal time (two thirds of the lifetime)', () => input({}, {}, at(61)), 'Renewing'],
    ['before the renewal time', () => input({}, {}, at(59)), undefined],
    ["renewal disabled (cert-manager's renewal.policy), past the renewal time", () => input({ renewal: { policy: 'Disabled' } }, {}, at(89)), undefined],
    ['renewal disabled, and expired', () => input({ renewal: { policy: 'Disabled' } }, {}, at(91)), 'Expired'],
    // ACME Renewal Information: the CA's window replaces renewBefore, for the certificate it was given for.
    ['past an ARI window the CA moved early (days 10 to 11)', () => withWindow({}, [10, 11], at(11)), 'Renewing'],
    ['before an ARI window the CA moved early', () => withWindow({}, [10, 11], at(9.9)), undefined],
    ['past two thirds, before an ARI window the CA put later (days 70 to 71)', () => withWindow({}, [70, 71], at(65)), undefined],
    ['past a later ARI window', () => withWindow({}, [70, 71], at(71)), 'Renewing'],
    ['an ARI window kept for another certificate: renewBefore decides', () => withWindow({}, [10, 11], at(11), true), undefined],
    ['an ARI window, with renewal disabled', () => withWindow({ renewal: { policy: 'Disabled' } }, [10, 11], at(11)), undefined],
  ];
  it.each(rows)('%s → %s', async (_name, make, reason) => {
    const t = issuanceReason(await make());
    expect(t?.reason).toBe(reason);
    if (t) expect(t.message).not.toBe('');
  });

  it('names every field a request no longer matches', async () => {
    const t = issuanceReason(await input({ dnsNames: ['a.example.com'], subject: { countries: ['DE'] }, duration: '720h' }));
    expect(t?.message).toBe('Fields on existing CertificateRequest resource not up to date: [spec.dnsNames spec.subject.countries spec.duration]');
  });
});
