import { Gauge, type Registry } from 'prom-client';
import type { ChallengeObject } from '../api/acme/v1/challenge.js';

/**
 * Issuer and Challenge gauges under cert-manager's names, read from the informers at scrape time
 * (nothing kept between scrapes; a deleted object's series go with it):
 *
 *   certmanager_issuer_ready_status{name,namespace,condition}       1 for the Ready condition's status
 *   certmanager_clusterissuer_ready_status{name,condition}          the same for ClusterIssuers
 *   certmanager_certificate_challenge_status{name,namespace,domain,type,status,processing}   1 per Challenge
 *
 * cert-manager's challenge gauge also carries the challenge's free-text `reason` and its token as
 * `id`: left out here, as label values must stay bounded.
 */

type Conditioned = { metadata: { name: string; namespace?: string }; status?: { conditions?: { type: string; status: string }[] } };
const CONDITIONS = ['True', 'False', 'Unknown'] as const;

/** The Ready condition's status, Unknown when there is none (pure). */
export function readyStatus(o: Conditioned): (typeof CONDITIONS)[number] {
  const s = o.status?.conditions?.find((c) => c.type === 'Ready')?.status;
  return s === 'True' || s === 'False' ? s : 'Unknown';
}

/** One Challenge's labels (pure). */
export function challengeLabels(c: ChallengeObject) {
  return {
    name: c.metadata.name,
    namespace: c.metadata.namespace,
    domain: c.spec.dnsName,
    type: c.spec.type,
    status: c.status?.state ?? 'pending',
    processing: String(!!c.status?.processing),
  };
}

export function registerIssuerMetrics(registry: Registry, issuers: () => readonly Conditioned[], clusterIssuers: () => readonly Conditioned[]): void {
  new Gauge({
    name: 'certmanager_issuer_ready_status',
    help: 'The ready status of the issuer.',
    labelNames: ['name', 'namespace', 'condition'],
    registers: [registry],
    collect() {
      this.reset();
      for (const i of issuers())
        for (const condition of CONDITIONS)
          this.set({ name: i.metadata.name, namespace: i.metadata.namespace ?? '', condition }, readyStatus(i) === condition ? 1 : 0);
    },
  });
  new Gauge({
    name: 'certmanager_clusterissuer_ready_status',
    help: 'The ready status of the cluster issuer.',
    labelNames: ['name', 'condition'],
    registers: [registry],
    collect() {
      this.reset();
      for (const i of clusterIssuers())
        for (const condition of CONDITIONS) this.set({ name: i.metadata.name, condition }, readyStatus(i) === condition ? 1 : 0);
    },
  });
}

export function registerChallengeMetrics(registry: Registry, challenges: () => readonly ChallengeObject[]): void {
  new Gauge({
    name: 'certmanager_certificate_challenge_status',
    help: 'The status of certificate challenges.',
    labelNames: ['name', 'namespace', 'domain', 'type', 'status', 'processing'],
    registers: [registry],
    collect() {
      this.reset();
      for (const c of challenges()) this.set(challengeLabels(c), 1);
    },
  });
}
