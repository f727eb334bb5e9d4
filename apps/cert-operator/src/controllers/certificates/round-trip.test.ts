import { API_GROUPS } from '../../api/groups.js';
import { describe, expect, it } from 'vitest';
import type { CertificateObject, CertificateSpecType } from '../../api/v1/certificate.js';
import type { CertificateRequestObject } from '../../api/v1/certificaterequest.js';
import { createCSR, parseCSR, subjectValues } from '../../pki/csr.js';
import { inspectCertificate } from '../../pki/inspect.js';
import { generatePrivateKey, keySpecOf } from '../../pki/keys.js';
import { selfSign } from '../../pki/sign.js';
import { effectiveUsages } from '../../pki/usages.js';
import { requestMismatches } from './policies.js';
import { validateCertificate } from './validate.js';

/**
 * The spec goes into a CSR, and the CSR is compared with the spec to decide whether the request is
 * current. A spec the CSR cannot carry as written was never current: the operator made a request,
 * found it outdated, deleted it and made another, for ever. Every spec is either refused by
 * validation, with a reason, or round-trips.
 */
describe('a Certificate spec round-trips through its CSR, or is refused', () => {
  const cases: Record<string, Partial<CertificateSpecType>> = {
    'an empty subject serialNumber': { subject: { serialNumber: '' } },
    'an empty organization': { subject: { organizations: [''] } },
    'non-ASCII organizations': { subject: { organizations: ['Société Générale', '株式会社'] } },
    'a non-ASCII common name': { commonName: 'café', dnsNames: ['cafe.example.com'] },
    'a non-ASCII locality and street': { subject: { localities: ['Zürich'], streetAddresses: ['Bahnhofstraße 1'] } },
    'a country of three letters': { subject: { countries: ['DEU'] } },
    'a subject value with a comma and a plus': { subject: { organizations: ['A, B + C'] } },
    'a common name with a comma, a plus and a backslash': { commonName: 'A, B + C \\ D' },
    'an ordinary subject': { commonName: 'web', subject: { organizations: ['opkit'], countries: ['DE'], serialNumber: '42' } },
  };
  for (const [label, extra] of Object.entries(cases)) {
    it(label, async () => {
      const spec: CertificateSpecType = {
        secretName: 's',
        issuerRef: { name: 'i' },
        dnsNames: ['a.example.com'],
        privateKey: { algorithm: 'ECDSA' },
        ...extra,
      };
      const problems = validateCertificate({ metadata: { name: 'c' }, spec } as CertificateObject, () => true);
      if (problems.length) return expect(problems.join('; ')).toMatch(/spec\.(subject|commonName)/);
      const key = await generatePrivateKey(keySpecOf(spec.privateKey));
      const csr = await parseCSR(await createCSR(spec, key));
      const cr = { spec: { issuerRef: spec.issuerRef, isCA: false, usages: effectiveUsages(undefined, false) } } as unknown as CertificateRequestObject;
      expect(requestMismatches(API_GROUPS.opkit, spec, cr, csr)).toEqual([]);
      // And what the issued certificate says, read back as the trigger reads it.
      const issued = inspectCertificate((await selfSign({ csr, durationMs: 3_600_000, isCA: false, usages: ['server auth'] }, key)).certificate);
      expect({ commonName: issued.commonName, organizations: issued.organizations }).toEqual({
        commonName: spec.commonName,
        organizations: subjectValues(spec.subject, 'organizations'),
      });
    });
  }
});
