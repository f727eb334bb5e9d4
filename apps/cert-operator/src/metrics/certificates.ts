import { Gauge, type Registry } from 'prom-client';
import type { CertificateObject } from '../api/v1/certificate.js';

/**
 * Per-Certificate gauges under cert-manager's names and labels, so the alerts and dashboards
 * platform teams already run against cert-manager work unchanged:
 *
 *   certmanager_certificate_expiration_timestamp_seconds   notAfter (the name most alerts use)
 *   certmanager_certificate_not_after_timestamp_seconds    notAfter (cert-manager's newer name)
 *   certmanager_certificate_not_before_timestamp_seconds   notBefore
 *   certmanager_certificate_renewal_timestamp_seconds      when the operator will renew
 *   certmanager_certificate_ready_status{condition}        1 for the Ready condition's status, 0 for the others
 *   certmanager_clock_time_seconds_gauge                   the operator's clock, for skew-free arithmetic
 *
 * Timestamps are 0 until a certificate has been issued, as cert-manager's are (alert on `> 0`).
 * Computed from the informer cache at scrape time: a deleted Certificate's series disappear with
 * it, and nothing is kept per object between scrapes.
 */

export type IssuerLabels = { name: string; namespace: string; issuer_name: string; issuer_kind: string; issuer_group: string };
export type ReadyCondition = 'True' | 'False' | 'Unknown';

export interface CertificateSeries {
  labels: IssuerLabels;
  notAfter: number;
  notBefore: number;
  renewal: number;
  ready: ReadyCondition;
}

const seconds = (t: string | undefined) => {
  const ms = t ? Date.parse(t) : NaN;
  return Number.isFinite(ms) ? ms / 1000 : 0;
};

/** What one Certificate contributes (pure, table-tested). */
/** One Certificate's series; `ourGroup` names the issuer group when the issuerRef leaves it empty. */
export function certificateSeries(c: CertificateObject, ourGroup: string): CertificateSeries {
  const ref = c.spec.issuerRef;
  const status = c.status?.conditions?.find((x) => x.type === 'Ready')?.status;
  return {
    labels: {
      name: c.metadata.name,
      namespace: c.metadata.namespace,
      issuer_name: ref.name,
      issuer_kind: ref.kind || 'Issuer',
      issuer_group: ref.group || ourGroup,
    },
    notAfter: seconds(c.status?.notAfter),
    notBefore: seconds(c.status?.notBefore),
    renewal: seconds(c.status?.renewalTime),
    ready: status === 'True' || status === 'False' ? status : 'Unknown',
  };
}

const ISSUER_LABELS = ['name', 'namespace', 'issuer_name', 'issuer_kind', 'issuer_group'] as const;
const CONDITIONS: ReadyCondition[] = ['True', 'False', 'Unknown'];

/** Registers the gauges; `certificates` is read on every scrape (the cache's current list). */
export function registerCertificateMetrics(
  registry: Registry,
  ourGroup: string,
  certificates: () => readonly CertificateObject[],
  now: () => number = Date.now,
): void {
  // Each gauge reads the cache when scraped: a walk over the cached Certificates, no copies kept.
  const refresh = () => certificates().map((c) => certificateSeries(c, ourGroup));
  const timestamp = (name: string, help: string, pick: (s: CertificateSeries) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ISSUER_LABELS,
      registers: [registry],
      collect() {
        this.reset();
        for (const s of refresh()) this.set(s.labels, pick(s));
      },
    });
  timestamp(
    'certmanager_certificate_expiration_timestamp_seconds',
    'The date after which the certificate expires. Expressed as a Unix Epoch Time.',
    (s) => s.notAfter,
  );
  timestamp(
    'certmanager_certificate_not_after_timestamp_seconds',
    'The timestamp after which the certificate is invalid, expressed as a Unix Epoch Time.',
    (s) => s.notAfter,
  );
  timestamp(
    'certmanager_certificate_not_before_timestamp_seconds',
    'The timestamp before which the certificate is invalid, expressed as a Unix Epoch Time.',
    (s) => s.notBefore,
  );
  timestamp(
    'certmanager_certificate_renewal_timestamp_seconds',
    'The timestamp after which the certificate should be renewed, expressed as a Unix Epoch Time.',
    (s) => s.renewal,
  );
  new Gauge({
    name: 'certmanager_certificate_ready_status',
    help: 'The ready status of the certificate.',
    labelNames: ['condition', ...ISSUER_LABELS],
    registers: [registry],
    collect() {
      this.reset();
      for (const s of refresh()) for (const condition of CONDITIONS) this.set({ condition, ...s.labels }, s.ready === condition ? 1 : 0);
    },
  });
  new Gauge({
    name: 'certmanager_clock_time_seconds_gauge',
    help: 'The clock time given in seconds (from 1970/01/01 UTC).',
    registers: [registry],
    collect() {
      this.set(now() / 1000);
    },
  });
}
