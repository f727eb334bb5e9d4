import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { CertificateObject } from '../api/v1/certificate.js';
import { certificateSeries, registerCertificateMetrics } from './certificates.js';

const cert = (name: string, patch: { issuerRef?: Record<string, string>; status?: Record<string, unknown> } = {}) =>
  ({
    apiVersion: 'cert.opkit.dev/v1',
    kind: 'Certificate',
    metadata: { name, namespace: 'web' },
    spec: { secretName: name, dnsNames: [`${name}.example.com`], issuerRef: { name: 'ca', ...patch.issuerRef } },
    status: patch.status,
  }) as unknown as CertificateObject;

const ready = (status: string) => ({ conditions: [{ type: 'Ready', status, reason: 'x', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' }] });

describe('certificate metrics', () => {
  it.each([
    ['never issued: timestamps 0, Ready Unknown', cert('new'), { notAfter: 0, notBefore: 0, renewal: 0, ready: 'Unknown' }],
    [
      'issued and Ready',
      cert('web', { status: { ...ready('True'), notBefore: '2026-01-01T00:00:00Z', notAfter: '2026-04-01T00:00:00Z', renewalTime: '2026-03-02T00:00:00Z' } }),
      { notAfter: 1775001600, notBefore: 1767225600, renewal: 1772409600, ready: 'True' },
    ],
    ['failing', cert('bad', { status: ready('False') }), { ready: 'False' }],
  ])('%s', (_, c, expected) => {
    expect(certificateSeries(c, 'cert.opkit.dev')).toMatchObject(expected);
  });

  it.each([
    ['Issuer by default, in our group', {}, { issuer_name: 'ca', issuer_kind: 'Issuer', issuer_group: 'cert.opkit.dev' }],
    [
      "a ClusterIssuer named in cert-manager's group",
      { kind: 'ClusterIssuer', group: 'cert-manager.io' },
      { issuer_kind: 'ClusterIssuer', issuer_group: 'cert-manager.io' },
    ],
  ])('labels: %s', (_, issuerRef, expected) => {
    expect(certificateSeries(cert('x', { issuerRef }), 'cert.opkit.dev').labels).toMatchObject({ name: 'x', namespace: 'web', ...expected });
  });

  it('exposes the current cache on each scrape: series come and go with the Certificates', async () => {
    const registry = new Registry();
    let certs = [cert('a', { status: { ...ready('True'), notAfter: '2026-04-01T00:00:00Z' } }), cert('b')];
    registerCertificateMetrics(
      registry,
      'cert.opkit.dev',
      () => certs,
      () => 1_767_225_600_000,
    );
    const text = await registry.metrics();
    expect(text).toContain(
      'certmanager_certificate_expiration_timestamp_seconds{name="a",namespace="web",issuer_name="ca",issuer_kind="Issuer",issuer_group="cert.opkit.dev"} 1775001600',
    );
    expect(text).toContain(
      'certmanager_certificate_ready_status{condition="True",name="a",namespace="web",issuer_name="ca",issuer_kind="Issuer",issuer_group="cert.opkit.dev"} 1',
    );
    expect(text).toContain(
      'certmanager_certificate_ready_status{condition="False",name="a",namespace="web",issuer_name="ca",issuer_kind="Issuer",issuer_group="cert.opkit.dev"} 0',
    );
    expect(text).toContain(
      'certmanager_certificate_ready_status{condition="Unknown",name="b",namespace="web",issuer_name="ca",issuer_kind="Issuer",issuer_group="cert.opkit.dev"} 1',
    );
    expect(text).toContain('certmanager_clock_time_seconds_gauge 1767225600');
    certs = [certs[1]!];
    const after = await registry.metrics();
    expect(after).not.toContain('name="a"');
    expect(after).toContain(
      'certmanager_certificate_renewal_timestamp_seconds{name="b",namespace="web",issuer_name="ca",issuer_kind="Issuer",issuer_group="cert.opkit.dev"} 0',
    );
  });
});
